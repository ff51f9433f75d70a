import { ConfigProvider, Effect, Redacted } from "effect"
import { describe, expect, it } from "vitest"
import { daemonConfig } from "../src/DaemonConfig.js"
import { tokenDigest } from "../src/HttpUsers.js"
import { spawnScript } from "./DaemonProcess.js"

/**
 * A bad variable ends the daemon at start: exit code 2, one line on stderr naming the variable,
 * and nothing started (no log line, no connection attempt). Every other variable points at
 * servers that do not exist, so a daemon that got past its configuration would hang or fail
 * differently instead of exiting 2.
 */

const base = {
  VALKEY_URL: "redis://127.0.0.1:1",
  MQTT_URL: "mqtt://127.0.0.1:1",
  HTTP_HOST: "127.0.0.1",
  HTTP_PORT: "0",
  ISLAND_INSTANCE_ID: "config-test"
}

// Relative to the repository root, the daemon's working directory: a file that exists, and one that does not.
const EXISTING_FILE = "apps/island-daemon/fixtures/job-order.json"
const MISSING_FILE = "apps/island-daemon/fixtures/no-such-ca.pem"

const cases: ReadonlyArray<readonly [variable: string, value: string, extra?: Record<string, string>]> = [
  ["HTTP_PORT", "abc"],
  ["ISLAND_ROLES", "bogus"],
  ["INDEX_UPGRADE", "maybe"],
  ["MQTT_URL", "notaurl"],
  // Sentinels instead of a URL; "bad" has no port.
  ["VALKEY_SENTINELS", "bad"],
  // Values the packages refuse only once the island starts: checked at start, by name.
  ["VALKEY_PREFIX", "a:b"],
  ["MQTT_DISCRIMINATOR", "a+b"],
  ["MQTT_SHARED_GROUP", "a/b"],
  ["MQTT_WILDCARD_LEVELS", "99"],
  ["ISLAND_INSTANCE_ID", "not a client id"],
  ["SFC_FALLBACK_INTERVAL_MS", "0"],
  ["HTTP_TOKEN", ""],
  ["HTTP_OPERATOR_TOKEN", ""],
  ["HTTP_TOKEN_FILE", MISSING_FILE],
  ["MQTT_MAX_PAYLOAD_BYTES", "0"],
  ["MQTT_RECEIVE_MAXIMUM", "many"],
  // TLS files must exist, come in pairs and go with a TLS connection.
  ["VALKEY_TLS_CA_FILE", MISSING_FILE, { VALKEY_URL: "rediss://127.0.0.1:1" }],
  ["MQTT_TLS_CA_FILE", EXISTING_FILE],
  ["MQTT_TLS_KEY_FILE", "", { MQTT_URL: "mqtts://127.0.0.1:1", MQTT_TLS_CERT_FILE: EXISTING_FILE }],
  // The embedded archive's directory: a file is none, nor can one be made below it.
  ["PG_DATA_DIR", EXISTING_FILE],
  ["PG_DATA_DIR", `${EXISTING_FILE}/archive`]
]

/**
 * Runs the daemon until it exits. Bounded: a daemon that got past its configuration would keep
 * trying to connect. The bound is generous because Node and tsx alone take 1 to 3 s to load the
 * modules on a busy machine; "at once" is asserted by the empty stdout: the daemon exited before
 * its first log line, so before it tried to reach any server.
 */
const runToExit = async (env: Record<string, string>) => {
  const daemon = spawnScript("main.ts", env)
  const timer = setTimeout(() => daemon.child.kill("SIGKILL"), 15_000)
  const exit = await daemon.exited
  clearTimeout(timer)
  return { exit, stdout: daemon.stdout(), stderr: daemon.stderr().trim() }
}

// One after the other: a dozen Node processes loading at once would measure the machine, not the daemon.
describe("configuration errors", () => {
  it.each(cases.map(([variable, value, extra]) => [variable, value, extra ?? {}] as const))("%s=%s ends the daemon at start with exit code 2 and names the variable", async (variable, value, extra) => {
    const env: Record<string, string> = { ...base, [variable]: value, ...extra }
    // An empty value stands for "not set" where the variable must be missing.
    if (value === "" && !variable.endsWith("_TOKEN")) delete env[variable]
    if (variable === "VALKEY_SENTINELS") delete env["VALKEY_URL"]
    const { exit, stdout, stderr } = await runToExit(env)
    expect(exit.code, stderr).toBe(2)
    expect(exit.afterMs).toBeLessThan(10_000)
    expect(stderr).toMatch(/^invalid configuration: /)
    expect(stderr).toContain(`${variable}:`)
    expect(stderr.split("\n")).toHaveLength(1)
    expect(stdout).toBe("")
  }, 20_000)

  it("reports every bad variable at once, each by name", async () => {
    const bad = { HTTP_PORT: "70000", VALKEY_URL: "notaurl", SHUTDOWN_GRACE_MS: "0", MQTT_SESSION_EXPIRY_SECONDS: "-1", ISLAND_ROLES: "engine,bogus", PG_DATA_DIR: EXISTING_FILE }
    const { exit, stdout, stderr } = await runToExit({ ...base, ...bad })
    expect(exit.code, stderr).toBe(2)
    for (const variable of Object.keys(bad)) expect(stderr).toContain(`${variable}:`)
    expect(stdout).toBe("")
  }, 20_000)
})

/** The configuration read in-process from exactly these variables. */
const configFrom = (env: Record<string, string>) => Effect.runPromise(daemonConfig.parse(ConfigProvider.fromEnvRecord(env)))

describe("configuration defaults and secrets", () => {
  it("serves HTTP on the loopback interface unless HTTP_HOST says otherwise, without a token by default", async () => {
    const config = await configFrom(base)
    expect(config.httpHost).toBe("127.0.0.1")
    expect(config.httpUsers).toEqual([])
    const { HTTP_HOST: _host, ...withoutHost } = base
    expect((await configFrom(withoutHost)).httpHost).toBe("127.0.0.1")
  })

  it("takes the MQTT credentials, the HTTP token and the TLS files, keeping the secrets redacted", async () => {
    const config = await configFrom({
      ...base,
      MQTT_URL: "mqtts://127.0.0.1:1",
      MQTT_USERNAME: "island",
      MQTT_PASSWORD: "s3cret",
      MQTT_TLS_CA_FILE: EXISTING_FILE,
      VALKEY_URL: "rediss://127.0.0.1:1",
      VALKEY_TLS_CA_FILE: EXISTING_FILE,
      HTTP_TOKEN: "t0ken"
    })
    expect(config.mqtt.username).toBe("island")
    expect(Redacted.value(config.mqtt.password!)).toBe("s3cret")
    expect(String(config.mqtt.password)).not.toContain("s3cret")
    expect(config.mqtt.tls.ca?.toString()).toContain("JobOrderID")
    expect(config.valkey.tlsCa?.toString()).toContain("JobOrderID")
    expect(config.httpUsers.map((u) => [u.name, u.role, Redacted.value(u.digest)])).toEqual([["viewer", "viewer", tokenDigest("t0ken")]])
    expect(JSON.stringify(config)).not.toMatch(/s3cret|t0ken/)
  })

  it("keeps the embedded archive in PG_DATA_DIR, by default one directory per island under XDG_STATE_HOME; memory:// keeps it in memory", async () => {
    expect((await configFrom({ ...base, XDG_STATE_HOME: "/srv/state" })).pgDataDir).toBe("/srv/state/microdcs/microdcs/execution-log")
    expect((await configFrom({ ...base, XDG_STATE_HOME: "/srv/state", VALKEY_PREFIX: "plant/a" })).pgDataDir).toBe("/srv/state/microdcs/plant%2Fa/execution-log")
    expect((await configFrom({ ...base, XDG_STATE_HOME: "/srv/state", VALKEY_PREFIX: ".." })).pgDataDir).toBe("/srv/state/microdcs/%2E%2E/execution-log")
    expect((await configFrom(base)).pgDataDir).toMatch(/\/\.local\/state\/microdcs\/microdcs\/execution-log$/)
    expect((await configFrom({ ...base, PG_DATA_DIR: "memory://" })).pgDataDir).toBe("memory://")
    expect((await configFrom({ ...base, PG_DATA_DIR: "/tmp/new/archive" })).pgDataDir).toBe("/tmp/new/archive")
  })

  it("takes the MQTT message limits (payload also the publisher's page size), leaving unset ones to the package defaults", async () => {
    const set = await configFrom({ ...base, MQTT_MAX_PAYLOAD_BYTES: "65536", MQTT_MAX_PACKET_BYTES: "200000", MQTT_RECEIVE_MAXIMUM: "32", MQTT_MAX_NESTING_DEPTH: "20" })
    expect(set.mqtt.limits).toEqual({ maxPayloadBytes: 65536, maxPacketBytes: 200000, receiveMaximum: 32, maxNestingDepth: 20 })
    const unset = await configFrom(base)
    expect(unset.mqtt.limits).toEqual({ maxPayloadBytes: undefined, maxPacketBytes: undefined, receiveMaximum: undefined, maxNestingDepth: undefined })
  })
})
