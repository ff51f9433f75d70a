import { describe, expect, it } from "vitest"
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

const cases: ReadonlyArray<readonly [variable: string, value: string]> = [
  ["HTTP_PORT", "abc"],
  ["ISLAND_ROLES", "bogus"],
  ["MQTT_URL", "notaurl"],
  // Sentinels instead of a URL; "bad" has no port.
  ["VALKEY_SENTINELS", "bad"]
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
  it.each(cases)("%s=%s ends the daemon at start with exit code 2 and names the variable", async (variable, value) => {
    const env: Record<string, string> = { ...base, [variable]: value }
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
    const bad = { HTTP_PORT: "70000", VALKEY_URL: "notaurl", SHUTDOWN_GRACE_MS: "0", MQTT_SESSION_EXPIRY_SECONDS: "-1", ISLAND_ROLES: "engine,bogus" }
    const { exit, stdout, stderr } = await runToExit({ ...base, ...bad })
    expect(exit.code, stderr).toBe(2)
    for (const variable of Object.keys(bad)) expect(stderr).toContain(`${variable}:`)
    expect(stdout).toBe("")
  }, 20_000)
})
