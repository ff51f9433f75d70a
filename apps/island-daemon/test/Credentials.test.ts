import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { MethodEventTypes } from "@microdcs/job-state"
import { storeLayer, Valkey } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { type ChildServer, randomPrefix, startValkeyServer, type ValkeyServer } from "@microdcs/test-utils"
import { daemonEnv, spawnDaemon, spawnScript } from "./DaemonProcess.js"
import { makeMes } from "./IslandKit.js"
import { startPasswordMosquitto } from "./SecuredServers.js"

/**
 * The daemon against servers that want credentials: a mosquitto with a password file and a
 * Valkey with `requirepass` and an ACL user. Right credentials: the island works. Wrong ones,
 * or missing grants: waiting cannot help, so the daemon says what is wrong and exits 2 at once
 * instead of retrying forever as if the server were not up yet.
 */

const ADMIN_PASSWORD = "admin-pw-4411"
const MQTT_USER = "island"
const MQTT_PASSWORD = "mqtt-pw-9d2c"
const VALKEY_USER = "island"
const VALKEY_PASSWORD = "valkey-pw-51e0"

let broker: ChildServer & { readonly url: string }
let valkey: ValkeyServer
const hostPort = (server: { readonly host: string; readonly port: number }) => `${server.host}:${server.port}`

/**
 * ACL users, then a password for the default user (set last: the server's start probe pings
 * without one): one user with every grant the island needs, one without channel grants.
 */
const secureValkey = Effect.gen(function* () {
  const v = yield* Valkey
  yield* unsafeCommand(v, "acl", (c) => c.call("ACL", "SETUSER", VALKEY_USER, "reset", "on", `>${VALKEY_PASSWORD}`, "~*", "&*", "+@all"))
  yield* unsafeCommand(v, "acl", (c) => c.call("ACL", "SETUSER", "nochannels", "reset", "on", ">nochannels-pw", "~*", "resetchannels", "+@all"))
  yield* unsafeCommand(v, "requirepass", (c) => c.config("SET", "requirepass", ADMIN_PASSWORD))
})

beforeAll(async () => {
  broker = await startPasswordMosquitto({ [MQTT_USER]: MQTT_PASSWORD, mes: "mes-pw" })
  valkey = await startValkeyServer()
  await Effect.runPromise(secureValkey.pipe(Effect.provide(Layer.orDie(storeLayer({ url: valkey.url })))))
})
afterAll(async () => {
  await broker?.stop()
  await valkey?.stop()
})

/** The environment of a daemon with the given credentials (no URL credentials: the variables). */
const envWith = (prefix: string, instanceId: string, credentials: Record<string, string>) => ({
  ...daemonEnv({ valkeyUrl: `redis://${hostPort(valkey)}`, mqttUrl: broker.url, prefix, instanceId }),
  ...credentials
})

const rightCredentials = { VALKEY_USERNAME: VALKEY_USER, VALKEY_PASSWORD, MQTT_USERNAME: MQTT_USER, MQTT_PASSWORD }

/** Runs the daemon until it exits; bounded, since a daemon that keeps retrying never would. */
const runToExit = async (env: Record<string, string>) => {
  const d = spawnScript("main.ts", env)
  const timer = setTimeout(() => d.child.kill("SIGKILL"), 30_000)
  const exit = await d.exited
  clearTimeout(timer)
  return { exit, stdout: d.stdout(), stderr: d.stderr().trim() }
}

describe("credentials", () => {
  it.live(
    "with MQTT_USERNAME/MQTT_PASSWORD and VALKEY_USERNAME/VALKEY_PASSWORD the island becomes ready and answers requests",
    () => {
      const prefix = randomPrefix("cr")
      return Effect.gen(function* () {
        const d = yield* Effect.acquireRelease(
          Effect.promise(() => spawnDaemon(envWith(prefix, "cred-1", rightCredentials))),
          (p) => Effect.promise(() => p.stop("SIGKILL"))
        )
        yield* Effect.promise(() => d.waitReady(45_000))
        const mes = yield* makeMes(`mqtt://mes:mes-pw@${hostPort(broker)}`, prefix)
        const reply = yield* mes.ok(MethodEventTypes.Store, { JobOrder: { JobOrderID: "jo-cred-1" } })
        expect(reply.data).toMatchObject({ JobOrderID: "jo-cred-1" })
        for (const secret of [MQTT_PASSWORD, VALKEY_PASSWORD]) expect(d.stdout() + d.stderr()).not.toContain(secret)
        const exit = yield* Effect.promise(() => d.stop("SIGTERM"))
        expect(exit.code, d.stderr()).toBe(0)
      }).pipe(Effect.scoped)
    },
    90_000
  )

  const refusals: ReadonlyArray<readonly [what: string, credentials: Record<string, string>, expected: RegExp]> = [
    ["a wrong MQTT password", { ...rightCredentials, MQTT_PASSWORD: "wrong-mqtt-pw" }, /mqtt: .*MQTT_USERNAME and MQTT_PASSWORD/],
    ["no MQTT credentials", { VALKEY_USERNAME: VALKEY_USER, VALKEY_PASSWORD }, /mqtt: .*refused/],
    ["a wrong Valkey password", { ...rightCredentials, VALKEY_PASSWORD: "wrong-valkey-pw" }, /valkey: .*WRONGPASS/],
    ["no Valkey password", { MQTT_USERNAME: MQTT_USER, MQTT_PASSWORD }, /valkey: .*NOAUTH/],
    ["a Valkey user without channel grants", { ...rightCredentials, VALKEY_USERNAME: "nochannels", VALKEY_PASSWORD: "nochannels-pw" }, /valkey: .*NOPERM/]
  ]

  for (const [what, credentials, expected] of refusals) {
    it.live(
      `${what}: the daemon says what is wrong and exits 2 instead of retrying`,
      () => {
        const prefix = randomPrefix("cr")
        return Effect.gen(function* () {
          const { exit, stdout, stderr } = yield* Effect.promise(() => runToExit(envWith(prefix, "cred-2", credentials)))
          expect(exit.code, `${stderr}\n${stdout.slice(-2000)}`).toBe(2)
          expect(stderr).toMatch(/^island not started: /)
          expect(stderr).toMatch(expected)
          expect(stdout).toContain("a server refused it")
          expect(stdout).not.toContain("not reachable yet")
          for (const secret of [MQTT_PASSWORD, VALKEY_PASSWORD, "wrong-mqtt-pw", "wrong-valkey-pw", "nochannels-pw"]) expect(stdout + stderr).not.toContain(secret)
        })
      },
      60_000
    )
  }
})
