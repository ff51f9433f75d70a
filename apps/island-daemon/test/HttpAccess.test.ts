import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { inject } from "vitest"
import { type MosquittoServer, randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { daemon, daemonEnv } from "./DaemonProcess.js"

/**
 * Who may read the island over HTTP: by default the server listens on loopback only; with
 * HTTP_TOKEN, `/metrics` and the JSON API need it as a bearer token while the probes stay open.
 */

let broker: MosquittoServer
beforeAll(async () => {
  broker = await startMosquitto()
})
afterAll(async () => {
  await broker?.stop()
})

const TOKEN = "island-test-token-7f3a"

describe("HTTP access", () => {
  it.live(
    "listens on 127.0.0.1 unless HTTP_HOST says otherwise",
    () =>
      Effect.gen(function* () {
        const { HTTP_HOST: _host, ...env } = daemonEnv({ valkeyUrl: inject("valkeyUrl"), mqttUrl: broker.url, prefix: randomPrefix("ha"), instanceId: "access-1" })
        const d = yield* daemon(env, { ready: false })
        const listening = d.logs().find((l) => l.message === "http server listening")
        expect(listening?.annotations?.["host"]).toBe("127.0.0.1")
      }).pipe(Effect.scoped),
    45_000
  )

  it.live(
    "with HTTP_TOKEN, /metrics and /api answer 401 without the bearer token or with a wrong one, 200 with it; /healthz and /readyz stay open",
    () =>
      Effect.gen(function* () {
        const env = daemonEnv({ valkeyUrl: inject("valkeyUrl"), mqttUrl: broker.url, prefix: randomPrefix("ha"), instanceId: "access-2", extra: { HTTP_TOKEN: TOKEN } })
        // waitReady polls /readyz without a token: the probes need none.
        const d = yield* daemon(env)
        expect((yield* Effect.promise(() => d.get("/healthz"))).status).toBe(200)
        expect((yield* Effect.promise(() => d.get("/readyz"))).status).toBe(200)
        for (const path of ["/metrics", "/api/scopes", "/api/joborders/jo-1"]) {
          const none = yield* Effect.promise(() => d.get(path))
          expect(none.status, path).toBe(401)
          expect(none.text).not.toContain("microdcs_")
          const wrong = yield* Effect.promise(() => d.get(path, { authorization: `Bearer ${TOKEN}x` }))
          expect(wrong.status, path).toBe(401)
          const basic = yield* Effect.promise(() => d.get(path, { authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString("base64")}` }))
          expect(basic.status, path).toBe(401)
        }
        const metrics = yield* Effect.promise(() => d.get("/metrics", { authorization: `Bearer ${TOKEN}` }))
        expect(metrics.status).toBe(200)
        expect(metrics.text).toContain("microdcs_messages_total")
        const scopes = yield* Effect.promise(() => d.get("/api/scopes", { authorization: `Bearer ${TOKEN}` }))
        expect(scopes.status).toBe(200)
        // The token never shows in the logs.
        expect(d.stdout()).not.toContain(TOKEN)
        expect(d.stderr()).not.toContain(TOKEN)
      }).pipe(Effect.scoped),
    45_000
  )
})
