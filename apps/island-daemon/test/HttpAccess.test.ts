import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { inject } from "vitest"
import { type MosquittoServer, randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { daemon, daemonEnv } from "./DaemonProcess.js"

/**
 * Who may read the island over HTTP, and who may act: by default the server listens on loopback
 * only and nobody may act; with HTTP_TOKEN, `/metrics` and the JSON API need it as a bearer token
 * while the probes stay open; HTTP_OPERATOR_TOKEN's holder may also act.
 */

let broker: MosquittoServer
beforeAll(async () => {
  broker = await startMosquitto()
})
afterAll(async () => {
  await broker?.stop()
})

const TOKEN = "island-test-token-7f3a"
const OPERATOR_TOKEN = "island-operator-token-91bd"

describe("HTTP access", () => {
  it.live(
    "listens on 127.0.0.1 unless HTTP_HOST says otherwise",
    () =>
      Effect.gen(function* () {
        const { HTTP_HOST: _host, ...env } = daemonEnv({ valkeyUrl: inject("valkeyUrl"), mqttUrl: broker.url, prefix: randomPrefix("ha"), instanceId: "access-1" })
        const d = yield* daemon(env, { ready: false })
        const listening = d.logs().find((l) => l.message === "http server listening")
        expect(listening?.annotations?.["host"]).toBe("127.0.0.1")
        // No token configured: open to read, and nobody may act (the safe default).
        expect((yield* Effect.promise(() => d.get("/api/console/me"))).json()).toEqual({ user: "anonymous", role: "viewer", actions: false })
        const act = yield* Effect.promise(() => d.request("POST", "/api/console/jobs/jo-1/actions/Abort", { "content-type": "application/json" }))
        expect(act.status).toBe(403)
        expect(act.json()).toEqual({ error: "actions-off", message: "no operator is configured: set HTTP_OPERATOR_TOKEN or an operator in HTTP_TOKEN_FILE" })
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

  it.live(
    "HTTP_TOKEN reads and is refused actions (403); HTTP_OPERATOR_TOKEN reads and acts",
    () =>
      Effect.gen(function* () {
        const extra = { HTTP_TOKEN: TOKEN, HTTP_OPERATOR_TOKEN: OPERATOR_TOKEN }
        const d = yield* daemon(daemonEnv({ valkeyUrl: inject("valkeyUrl"), mqttUrl: broker.url, prefix: randomPrefix("ha"), instanceId: "access-3", extra }))
        const as = (token: string) => ({ authorization: `Bearer ${token}`, "content-type": "application/json" })
        expect((yield* Effect.promise(() => d.get("/api/console/me", as(TOKEN)))).json()).toEqual({ user: "viewer", role: "viewer", actions: false })
        expect((yield* Effect.promise(() => d.get("/api/console/me", as(OPERATOR_TOKEN)))).json()).toEqual({ user: "operator", role: "operator", actions: true })
        expect((yield* Effect.promise(() => d.get("/api/scopes", as(OPERATOR_TOKEN)))).status).toBe(200)
        const viewer = yield* Effect.promise(() => d.request("POST", "/api/console/jobs/jo-1/actions/Abort", as(TOKEN)))
        expect([viewer.status, viewer.json()]).toEqual([403, { error: "forbidden", message: "viewer is a viewer: actions need an operator's token" }])
        const operator = yield* Effect.promise(() => d.request("POST", "/api/console/jobs/jo-1/actions/Abort", as(OPERATOR_TOKEN)))
        expect([operator.status, operator.json()]).toEqual([404, { error: "unknown-job", message: "job order jo-1 does not exist" }])
        for (const token of [TOKEN, OPERATOR_TOKEN]) expect(d.stdout() + d.stderr()).not.toContain(token)
      }).pipe(Effect.scoped),
    45_000
  )
})
