import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { inject } from "vitest"
import { type ChildServer, randomPrefix } from "@microdcs/test-utils"
import { daemonEnv, spawnDaemon, spawnScript } from "./DaemonProcess.js"
import { makeTestCertificates, startTlsMosquitto } from "./SecuredServers.js"

/**
 * The daemon against a broker that speaks only TLS with a certificate from a private CA: with
 * MQTT_TLS_CA_FILE it connects; without it the certificate is not trusted, which waiting cannot
 * change, so it exits 2 and says to check the TLS files.
 */

let certificates: ReturnType<typeof makeTestCertificates>
let broker: ChildServer & { readonly url: string }
beforeAll(async () => {
  certificates = makeTestCertificates()
  broker = await startTlsMosquitto(certificates)
})
afterAll(async () => {
  await broker?.stop()
  certificates?.remove()
})

describe("TLS", () => {
  it.live(
    "with MQTT_TLS_CA_FILE the daemon trusts the broker's private CA and becomes ready",
    () =>
      Effect.gen(function* () {
        const env = daemonEnv({ valkeyUrl: inject("valkeyUrl"), mqttUrl: broker.url, prefix: randomPrefix("tls"), instanceId: "tls-1", extra: { MQTT_TLS_CA_FILE: certificates.ca } })
        const d = yield* Effect.acquireRelease(Effect.promise(() => spawnDaemon(env)), (p) => Effect.promise(() => p.stop("SIGKILL")))
        yield* Effect.promise(() => d.waitReady(45_000))
        const exit = yield* Effect.promise(() => d.stop("SIGTERM"))
        expect(exit.code, d.stderr()).toBe(0)
      }).pipe(Effect.scoped),
    60_000
  )

  it.live(
    "without the CA file the broker's certificate is not trusted: exit 2 naming the TLS settings, no endless retry",
    () =>
      Effect.gen(function* () {
        const env = daemonEnv({ valkeyUrl: inject("valkeyUrl"), mqttUrl: broker.url, prefix: randomPrefix("tls"), instanceId: "tls-2" })
        const d = spawnScript("main.ts", env)
        const timer = setTimeout(() => d.child.kill("SIGKILL"), 30_000)
        const exit = yield* Effect.promise(() => d.exited)
        clearTimeout(timer)
        expect(exit.code, d.stderr()).toBe(2)
        expect(d.stderr()).toMatch(/^island not started: mqtt: TLS with the MQTT broker failed: .*MQTT_TLS_CA_FILE/)
      }),
    45_000
  )
})
