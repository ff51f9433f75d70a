import { Agent, request } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer, Scope } from "effect"
import { storeLayer, Valkey } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { randomPrefix, startValkeyServer, type ValkeyServer } from "@microdcs/test-utils"
import { serveHttp } from "../src/Http.js"
import { makeMetrics } from "../src/Metrics.js"

/**
 * The HTTP server closes with its scope after answering the requests in flight. The server runs
 * in this process over its own Valkey (paused on purpose, which would stall other test files on
 * the run's server): a scrape of /metrics reads the store's figures, so it waits while Valkey is
 * paused, and the scope is closed meanwhile.
 */

let valkey: ValkeyServer
beforeAll(async () => {
  valkey = await startValkeyServer()
})
afterAll(async () => {
  await valkey?.stop()
})

interface Answer {
  readonly status: number | undefined
  readonly connection: string | undefined
  readonly text: string
}

/** A GET over a keep-alive connection (which would otherwise stay open after the answer). */
const get = (port: number, path: string, agent: Agent) =>
  new Promise<Answer>((resolve, reject) => {
    request({ host: "127.0.0.1", port, path, agent }, (res) => {
      let text = ""
      res.setEncoding("utf8")
      res.on("data", (chunk: string) => void (text += chunk))
      res.on("end", () => resolve({ status: res.statusCode, connection: res.headers.connection, text }))
    })
      .on("error", reject)
      .end()
  })

describe("HTTP server shutdown", () => {
  it.live(
    "a request in flight when the scope closes is answered (and its connection closed), then the server no longer takes connections",
    () =>
      Effect.gen(function* () {
        const metrics = makeMetrics()
        const scope = yield* Scope.make()
        yield* metrics.followStore.pipe(Scope.provide(scope))
        const { port } = yield* serveHttp({ host: "127.0.0.1", port: 0, metrics, endpoints: () => undefined }).pipe(Scope.provide(scope))
        const agent = new Agent({ keepAlive: true })
        expect((yield* Effect.promise(() => get(port, "/healthz", agent))).status).toBe(200)

        // Valkey holds every command for a while: the scrape waits for the store's figures.
        yield* Effect.flatMap(Valkey, (v) => unsafeCommand(v, "pause", (c) => c.call("CLIENT", "PAUSE", "2500", "ALL")))
        const inFlight = get(port, "/metrics", agent)
        yield* Effect.sleep("1 second")
        const closing = yield* Effect.forkChild(Scope.close(scope, Exit.void))

        const answer = yield* Effect.promise(() => inFlight)
        expect(answer.status).toBe(200)
        expect(answer.text).toContain("# TYPE microdcs_job_orders gauge")
        expect(answer.connection).toBe("close")
        yield* Fiber.join(closing)
        const after = yield* Effect.promise(() => get(port, "/healthz", new Agent()).then(() => "answered", (e: NodeJS.ErrnoException) => e.code))
        expect(after).toBe("ECONNREFUSED")
        agent.destroy()
      }).pipe(Effect.provide(Layer.orDie(storeLayer({ url: valkey.url, prefix: randomPrefix("hs") })))),
    30_000
  )
})
