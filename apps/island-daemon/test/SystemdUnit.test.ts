import { execFile } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { ConfigProvider, Effect, Exit } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { bundle, BIN } from "../src/build/bundle.js"
import { daemonConfig, shutdownDeadlineMs } from "../src/DaemonConfig.js"

/**
 * The systemd files in `deploy/systemd`: the environment file's example lists exactly the variables
 * the daemon reads (its configuration's, recorded as it is parsed, and the few the bundle reads from
 * `process.env` itself), so neither can drift; the unit's settings name only those, give the
 * shutdown more time than the daemon takes at most, and pass `systemd-analyze verify` where
 * systemd is installed.
 */

const deploy = (path: string) => readFileSync(new URL(`../../../deploy/${path}`, import.meta.url), "utf8")
const example = deploy("systemd/microdcs-island.env.example")
const unit = deploy("systemd/microdcs-island.service")

/** `NAME=value` (set) and `#NAME=value` (a default or an example, left unset) lines of the example. */
const exampleLines = [...example.matchAll(/^(#?)([A-Z][A-Z0-9_]*)=(.*)$/gm)].map((m) => ({ set: m[1] === "", name: m[2]!, value: m[3]! }))

/** Every variable the configuration reads, recorded by a provider that looks them up in `env`. */
const configVariables = async (env: Record<string, string>): Promise<ReadonlyArray<string>> => {
  const seen = new Set<string>()
  const source = ConfigProvider.fromEnv({ env, preserveEmptyStrings: true })
  const recording = ConfigProvider.make((path) => {
    seen.add(path.join("_"))
    return source.load(path)
  })
  await Effect.runPromiseExit(daemonConfig.parse(recording))
  return [...seen]
}

/** The variables the daemon's bundle reads from `process.env` itself (the log level, the embedded servers' binaries, ...). */
let directVariables: ReadonlyArray<string>
const cache = fileURLToPath(new URL("../node_modules/.cache/", import.meta.url))
let out: string
beforeAll(async () => {
  mkdirSync(cache, { recursive: true })
  out = mkdtempSync(join(cache, "systemd-unit-test-"))
  await bundle(out)
  const code = readFileSync(join(out, BIN), "utf8")
  directVariables = [...new Set([...code.matchAll(/\bprocess\.env(?:\[["']([A-Z0-9_]+)["']\]|\.([A-Z0-9_]+))/g)].map((m) => m[1] ?? m[2]!))]
}, 120_000)
afterAll(() => rmSync(out, { recursive: true, force: true }))

describe("the environment file's example (deploy/systemd)", () => {
  it("lists every variable the daemon reads, each once, and nothing else", async () => {
    const read = [...new Set([...(await configVariables({})), ...directVariables])].sort()
    const listed = exampleLines.map((l) => l.name)
    expect(listed.filter((name, i) => listed.indexOf(name) !== i)).toEqual([])
    expect({ missing: read.filter((v) => !listed.includes(v)), unknown: listed.filter((v) => !read.includes(v)) }).toEqual({ missing: [], unknown: [] })
    expect(directVariables).toContain("LOG_LEVEL")
  })

  it("sets a configuration the daemon accepts", async () => {
    const env = Object.fromEntries(exampleLines.filter((l) => l.set).map((l) => [l.name, l.value]))
    expect(Object.keys(env).sort()).toEqual(["MQTT_URL", "VALKEY_URL"])
    const exit = await Effect.runPromiseExit(daemonConfig.parse(ConfigProvider.fromEnv({ env, preserveEmptyStrings: true })))
    expect(Exit.isSuccess(exit), String(exit)).toBe(true)
  })
})

describe("the unit (deploy/systemd/microdcs-island.service)", () => {
  const settings = [...unit.matchAll(/^([A-Za-z]+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!] as const)
  const setting = (key: string) => settings.filter(([k]) => k === key).map(([, v]) => v)

  it("runs hardened: its own user, a read-only system, its state directory for the embedded PostgreSQL", () => {
    for (const [key, value] of [
      ["DynamicUser", "yes"],
      ["NoNewPrivileges", "yes"],
      ["ProtectSystem", "strict"],
      ["ProtectHome", "yes"],
      ["PrivateTmp", "yes"],
      ["StateDirectory", "microdcs-island"],
      ["Restart", "on-failure"],
      ["RestartPreventExitStatus", "2"],
      ["KillMode", "mixed"]
    ]) {
      expect(setting(key!), key).toEqual([value])
    }
    expect(setting("Environment")).toContain("PG_DATA_DIR=%S/microdcs-island/execution-log")
  })

  it("names only variables the example lists, and waits longer for a stop than the daemon takes at most", () => {
    const listed = new Set(exampleLines.map((l) => l.name))
    const named = setting("Environment").map((e) => e.split("=")[0]!)
    expect(named.filter((name) => !listed.has(name))).toEqual([])
    const grace = Number(exampleLines.find((l) => l.name === "SHUTDOWN_GRACE_MS")?.value)
    expect(grace).toBe(15_000)
    expect(Number(setting("TimeoutStopSec")[0]) * 1000).toBeGreaterThan(shutdownDeadlineMs(grace))
  })

  it("passes systemd-analyze verify where systemd is installed", async () => {
    const analyze = await promisify(execFile)("sh", ["-c", "command -v systemd-analyze || true"]).then((r) => r.stdout.trim())
    if (analyze === "") return
    // The bin is not installed here: any executable stands in for it.
    const copy = join(out, "microdcs-island.service")
    writeFileSync(copy, unit.replace(/^ExecStart=.*$/m, `ExecStart=${process.execPath}`))
    const { stderr } = await promisify(execFile)(analyze, ["verify", copy])
    expect(stderr).toBe("")
  })
})
