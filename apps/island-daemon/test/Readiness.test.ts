import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { storeLayer, Valkey } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { MethodEventTypes } from "@microdcs/job-state"
import { freePort, type MosquittoServer, randomPrefix, startMosquitto, startValkeyServer, type ValkeyServer } from "@microdcs/test-utils"
import { daemonEnv, type DaemonProcess, spawnDaemon, until } from "./DaemonProcess.js"
import { makeMes } from "./IslandKit.js"

/**
 * /healthz and /readyz against servers that come and go. This file has its own Valkey (stopped
 * and started again on the same port) and its own broker (likewise).
 */

let broker: MosquittoServer
let valkey: ValkeyServer | undefined
let daemon: DaemonProcess | undefined
beforeAll(async () => {
  broker = await startMosquitto()
})
afterAll(async () => {
  await daemon?.stop("SIGKILL")
  await valkey?.stop()
  await broker?.stop()
})

type Readiness = {
  readonly ready: boolean
  readonly checks: Record<string, boolean>
  readonly roles?: Record<string, { readonly ok: boolean; readonly reason?: string }>
  readonly problems?: ReadonlyArray<string>
}
const readiness = async (d: DaemonProcess) => {
  const reply = await d.get("/readyz")
  return { status: reply.status, body: reply.json() as Readiness }
}

describe("health and readiness", () => {
  it.live(
    "/healthz answers at once; /readyz is 503 until Valkey is up, 503 while it is away, 200 once it is back on the same port",
    () =>
      Effect.gen(function* () {
        const prefix = randomPrefix("rd")
        const port = yield* Effect.promise(() => freePort())
        const env = daemonEnv({ valkeyUrl: `redis://127.0.0.1:${port}`, mqttUrl: broker.url, prefix, instanceId: "ready-1" })
        // No Valkey yet: the daemon serves HTTP and waits for it instead of exiting.
        const d = yield* Effect.promise(() => spawnDaemon(env))
        daemon = d
        const health = yield* Effect.promise(() => d.get("/healthz"))
        expect(health.status).toBe(200)
        expect(health.json()).toEqual({ status: "alive" })
        const waiting = yield* Effect.promise(() => readiness(d))
        expect(waiting.status).toBe(503)
        expect(waiting.body.ready).toBe(false)
        // The API needs the store: not served until the island is up.
        expect((yield* Effect.promise(() => d.get("/api/scopes"))).status).toBe(503)
        // It keeps trying: the log says why it is not ready.
        yield* Effect.promise(() => until("a log line about the missing server", () => d.logs().find((l) => l.message?.includes("not reachable yet"))))
        expect(d.exit()).toBeUndefined()

        valkey = yield* Effect.promise(() => startValkeyServer({ port }))
        yield* Effect.promise(() => d.waitReady())
        const ready = yield* Effect.promise(() => readiness(d))
        expect(ready.body).toEqual({
          ready: true,
          checks: { valkey: true, mqtt: true, subscribed: true, intake: true, roles: true },
          roles: { "job-control": { ok: true }, engine: { ok: true }, sweep: { ok: true }, publisher: { ok: true } },
          problems: []
        })

        // Valkey goes away: not ready, still alive.
        yield* Effect.promise(() => valkey!.stop())
        const down = yield* Effect.promise(() => until("/readyz 503", async () => {
          const r = await readiness(d)
          return r.status === 503 ? r : undefined
        }))
        expect(down.body.checks).toMatchObject({ valkey: false, mqtt: true })
        expect((yield* Effect.promise(() => d.get("/healthz"))).status).toBe(200)

        // Back on the same port: ready again, without a restart.
        valkey = yield* Effect.promise(() => startValkeyServer({ port }))
        yield* Effect.promise(() => d.waitReady())
        expect(d.exit()).toBeUndefined()

        const exit = yield* Effect.promise(() => d.stop("SIGTERM"))
        expect(exit.code, d.stderr()).toBe(0)
      }),
    45_000
  )

  it.live(
    "/readyz is 503 while the broker is away and 200 when it is back; the daemon answers requests again",
    () =>
      Effect.gen(function* () {
        const prefix = randomPrefix("rd")
        valkey ??= yield* Effect.promise(() => startValkeyServer())
        const env = daemonEnv({ valkeyUrl: valkey.url, mqttUrl: broker.url, prefix, instanceId: "ready-2" })
        const d = yield* Effect.promise(() => spawnDaemon(env))
        daemon = d
        yield* Effect.promise(() => d.waitReady())

        const port = broker.port
        yield* Effect.promise(() => broker.stop())
        const down = yield* Effect.promise(() => until("/readyz 503", async () => {
          const r = await readiness(d)
          return r.status === 503 ? r : undefined
        }))
        expect(down.body.checks).toMatchObject({ valkey: true, mqtt: false })

        // A new broker on the same port knows nothing of the session: the daemon must subscribe again.
        broker = yield* Effect.promise(() => startMosquitto({ port }))
        yield* Effect.promise(() => d.waitReady())
        const mes = yield* makeMes(broker.url, prefix)
        const reply = yield* mes.ok(MethodEventTypes.Store, { JobOrder: { JobOrderID: "jo-after-broker-restart" } })
        expect(reply.data).toMatchObject({ JobOrderID: "jo-after-broker-restart" })

        const exit = yield* Effect.promise(() => d.stop("SIGTERM"))
        expect(exit.code, d.stderr()).toBe(0)
      }).pipe(Effect.scoped),
    45_000
  )

  it.live(
    "each role reports its own health: a sweep that cannot write its heartbeat and a publisher that cannot take its lease make /readyz 503, named",
    () => {
      const prefix = randomPrefix("rd")
      const checked = Effect.gen(function* () {
        const v = yield* Valkey
        // Keys of the wrong type where the sweep writes its heartbeat and the publisher its lease.
        const heartbeat = v.keys.key("sfcHeartbeat", {}) as string
        const lease = v.keys.key("publisherLease", {}) as string
        yield* unsafeCommand(v, "plant", (c) => c.multi().hset(heartbeat, "x", "1").hset(lease, "x", "1").exec())
        const d = yield* Effect.promise(() => spawnDaemon(daemonEnv({ valkeyUrl: valkey!.url, mqttUrl: broker.url, prefix, instanceId: "ready-3" })))
        daemon = d
        const unhealthy = yield* Effect.promise(() =>
          until(
            "/readyz 503 naming the sweep and the publisher",
            async () => {
              const r = await readiness(d)
              return r.status === 503 && r.body.roles?.["sweep"]?.ok === false && r.body.roles?.["publisher"]?.ok === false ? r : undefined
            },
            30_000
          )
        )
        expect(unhealthy.body.checks).toMatchObject({ valkey: true, mqtt: true, subscribed: true, roles: false })
        expect(unhealthy.body.roles).toMatchObject({ "job-control": { ok: true }, engine: { ok: true } })
        expect(unhealthy.body.roles?.["sweep"]?.reason).toMatch(/heartbeat/)
        expect(unhealthy.body.roles?.["publisher"]?.reason).toMatch(/lease/)
        expect(unhealthy.body.problems?.some((p) => p.startsWith("sweep: "))).toBe(true)
        expect(unhealthy.body.problems?.some((p) => p.startsWith("publisher: "))).toBe(true)

        // Repaired: each role recovers on its own, and the island is ready without a restart.
        yield* unsafeCommand(v, "repair", (c) => c.del(heartbeat, lease))
        yield* Effect.promise(() => d.waitReady(30_000))
        const ready = yield* Effect.promise(() => readiness(d))
        expect(ready.body.roles).toEqual({ "job-control": { ok: true }, engine: { ok: true }, sweep: { ok: true }, publisher: { ok: true } })

        const exit = yield* Effect.promise(() => d.stop("SIGTERM"))
        expect(exit.code, d.stderr()).toBe(0)
      })
      return Effect.gen(function* () {
        valkey ??= yield* Effect.promise(() => startValkeyServer())
        yield* checked.pipe(Effect.provide(Layer.orDie(storeLayer({ url: valkey.url, prefix }))))
      })
    },
    90_000
  )
})
