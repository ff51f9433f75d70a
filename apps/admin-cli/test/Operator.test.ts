import { Effect, Result } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { inject } from "vitest"
import { decodeJobOrderRecord, normalizedName } from "@microdcs/job-state"
import { JobOrderDao, ValkeyStreams } from "@microdcs/store"
import { randomPrefix } from "@microdcs/test-utils"
import packageJson from "../package.json" with { type: "json" }
import { colorsWanted, consoleFor, stripAnsi } from "../src/Colors.js"
import { progressBar } from "../src/Progress.js"
import { childEnv, type Cli, exec, hasScript, makeCli } from "./Cli.js"
import { SCOPE, seedIsland, withStore } from "./Seed.js"

// What an operator needs beyond reading: job actions, redrive, and output fit for a terminal or a pipe.
const url = inject("valkeyUrl")
const prefix = randomPrefix("cli-ops")
let cli: Cli

beforeAll(async () => {
  ;[cli] = await Promise.all([makeCli(url, prefix), seedIsland(url, prefix)])
})
afterAll(() => cli?.dispose())

const stateOf = (id: string) =>
  withStore(
    url,
    prefix,
    Effect.map(Effect.flatMap(JobOrderDao, (dao) => dao.get(id)), (stored) => {
      const decoded = decodeJobOrderRecord(stored.doc)
      return Result.isSuccess(decoded) ? normalizedName(decoded.success.state) : "malformed"
    })
  )

describe("help and version", () => {
  it("lists nested commands once each (no 'config config'), and --version prints the package version", async () => {
    // effect/cli's help lists a command's own subcommands; the nested ones show under their group's help.
    const [help, group, nested] = await Promise.all([
      cli.run(["--help"]),
      cli.run(["config", "references", "--help"]),
      cli.run(["config", "references", "list", "--help"])
    ])
    expect([help.code, group.code, nested.code]).toEqual([0, 0, 0])
    expect(help.stdout).toMatch(/^\s+config\s+station configuration/m)
    expect(group.stdout).toMatch(/^\s+list\s+the reference lists of a scope/m)
    expect(nested.stdout).toContain("microdcs-admin config references list [flags]")
    for (const text of [help.stdout, group.stdout, nested.stdout]) expect(text).not.toContain("config config")
    const version = await cli.run(["--version"])
    expect(version.stdout.trim()).toContain(packageJson.version)
    expect(packageJson.version).not.toBe("0.0.0")
  })

  it("explains the global options in words of their own, not the type's generic sentence", async () => {
    const help = (await cli.run(["--help"])).stdout
    expect(help).not.toContain("A user-defined piece of text.")
    expect(help).not.toContain("A true or false value.")
    // effect/cli puts a flag and its description on one line.
    const described = (option: string) => help.split("\n").find((line) => line.trimStart().startsWith(`${option} `))
    expect(described("--url URL")).toMatch(/^\s*--url URL\s+The island's Valkey: redis:\/\/\[user:password@\]host:port\[\/db\], or rediss:\/\/ for TLS\. Default: VALKEY_URL/)
    expect(described("--prefix PREFIX")).toMatch(/^\s*--prefix PREFIX\s+The island.s key prefix, .*Default: VALKEY_PREFIX, else microdcs/)
    expect(described("--json")).toMatch(/^\s*--json\s+Print machine-readable JSON/)
    // A choice still lists its values.
    expect(described("--completions")).toMatch(/\(choices: bash, zsh, fish, powershell, sh, pwsh\)$/)
  })

  it("writes no escape sequences when piped, even without NO_COLOR", async () => {
    const piped = await cli.run(["--help"], { NO_COLOR: "" })
    expect(piped.stdout).toContain("USAGE")
    expect(piped.stdout).not.toContain("\x1b[")
  })

  it.skipIf(!hasScript)("colours on a terminal, and not on a terminal with NO_COLOR", async () => {
    const onTerminal = (noColor: string) =>
      exec("script", ["-qec", [process.execPath, cli.main, "--help"].map((a) => `'${a}'`).join(" "), "/dev/null"],
        childEnv({ VALKEY_URL: url, VALKEY_PREFIX: prefix, TERM: "xterm", NO_COLOR: noColor }))
    const [coloured, plain] = await Promise.all([onTerminal(""), onTerminal("1")])
    expect(coloured.stdout).toContain("\x1b[")
    expect(plain.stdout).toContain("USAGE")
    expect(plain.stdout).not.toContain("\x1b[")
  })

  it("decides colour by stream and environment", () => {
    expect(colorsWanted({ isTTY: true }, {})).toBe(true)
    expect(colorsWanted({ isTTY: false }, {})).toBe(false)
    expect(colorsWanted({}, {})).toBe(false)
    expect(colorsWanted({ isTTY: true }, { NO_COLOR: "1" })).toBe(false)
    expect(colorsWanted({ isTTY: true }, { NO_COLOR: "" })).toBe(true)
    expect(colorsWanted({ isTTY: true }, { TERM: "dumb" })).toBe(false)
    expect(stripAnsi("\x1b[0;1mUSAGE\x1b[0m")).toBe("USAGE")
  })

  it("keeps colour on the stream that is a terminal", () => {
    const lines: Array<string> = []
    const base = {
      ...globalThis.console,
      log: (...a: ReadonlyArray<unknown>) => void lines.push(`out:${a.join(" ")}`),
      error: (...a: ReadonlyArray<unknown>) => void lines.push(`err:${a.join(" ")}`)
    }
    const console = consoleFor(base, { stdout: { isTTY: false }, stderr: { isTTY: true } }, {})
    console.log("\x1b[1mA\x1b[0m")
    console.error("\x1b[1mB\x1b[0m")
    expect(lines).toEqual(["out:A", "err:\x1b[1mB\x1b[0m"])
  })
})

describe("progress bar", () => {
  it("erases itself on a terminal when done, so no stale line stays above the result", async () => {
    const writes: Array<string> = []
    const stream = { isTTY: true, write: (s: string) => writes.push(s) } as unknown as NodeJS.WriteStream
    const bar = progressBar(stream)
    await Effect.runPromise(bar.update({ phase: "joborder", scanned: 3, repaired: 0, removed: 0 } as never))
    await Effect.runPromise(bar.done)
    expect(writes.at(-1)).toBe("\r\x1b[2K")
  })
})

describe("job actions", () => {
  it("abort asks for confirmation without a terminal (exit 5, nothing changed), then aborts with --yes; clear ends it", async () => {
    const refused = await cli.run(["joborders", "abort", "jo-1", "--scope", SCOPE])
    expect(refused.code).toBe(5)
    expect(await stateOf("jo-1")).toBe("AllowedToStart_Ready")
    const aborted = await cli.json(["joborders", "abort", "jo-1", "--scope", SCOPE, "--yes", "--comment", "operator"])
    expect(aborted).toMatchObject({ id: "jo-1", method: "Abort", state: "Aborted" })
    expect(await stateOf("jo-1")).toBe("Aborted")
    const cleared = await cli.json(["joborders", "clear", "jo-1", "--scope", SCOPE, "--yes"])
    expect(cleared).toMatchObject({ state: "EndState" })
  })

  it("pause and resume a running job", async () => {
    expect(await cli.json(["joborders", "pause", "jo-2", "--scope", SCOPE])).toMatchObject({ state: "Interrupted_Suspended" })
    expect(await cli.json(["joborders", "resume", "jo-2", "--scope", SCOPE])).toMatchObject({ state: "Running" })
    expect(await stateOf("jo-2")).toBe("Running")
  })

  it("refuses what the state machine refuses (exit 6), an unknown id (exit 3), and a job of another scope (exit 3)", async () => {
    const notRunning = await cli.run(["joborders", "resume", "jo-4", "--scope", SCOPE])
    expect(notRunning.code).toBe(6)
    expect(notRunning.stderr).toMatch(/Resume jo-4/)
    expect(await stateOf("jo-4")).toBe("Ended_Completed")
    expect((await cli.run(["joborders", "pause", "jo-nope", "--scope", SCOPE])).code).toBe(3)
    expect((await cli.run(["joborders", "pause", "jo-2", "--scope", "line-2"])).code).toBe(3)
  })
})

describe("dead letters", () => {
  const deadLetters = () =>
    withStore(url, prefix, Effect.flatMap(ValkeyStreams, (s) => s.readDeadLetters("sfc", SCOPE)))

  it("redrive needs --id or --all (exit 2) and confirmation (exit 5); then moves the entry back to its stream", async () => {
    expect((await cli.run(["streams", "redrive", "--kind", "sfc", "--scope", SCOPE, "--yes"])).code).toBe(2)
    const before = await deadLetters()
    expect(before.entries.length).toBe(1)
    expect((await cli.run(["streams", "redrive", "--kind", "sfc", "--scope", SCOPE, "--all"])).code).toBe(5)
    expect((await deadLetters()).entries.length).toBe(1)
    const done = await cli.json(["streams", "redrive", "--kind", "sfc", "--scope", SCOPE, "--id", before.entries[0]!.id, "--yes"])
    expect(done).toMatchObject({ redriven: 1, skipped: 0 })
    expect((await deadLetters()).entries).toEqual([])
    expect((await cli.run(["streams", "redrive", "--kind", "sfc", "--scope", SCOPE, "--id", before.entries[0]!.id, "--yes"])).code).toBe(3)
  })
})

describe("retry of an open action", () => {
  it("asks first (exit 5) and needs a reason (exit 2), then sends the open command again as the next attempt; an action not in the recipe or no execution is exit 3", async () => {
    expect((await cli.run(["executions", "retry-action", "jo-2", "tighten", "--reason", "station back"])).code).toBe(5)
    expect((await cli.run(["executions", "retry-action", "jo-2", "tighten", "--yes"])).code).toBe(2)
    const retried = await cli.json(["executions", "retry-action", "jo-2", "tighten", "--reason", "station back", "--yes"])
    expect(retried).toMatchObject({ jobId: "jo-2", action: "tighten", attempt: 2, reason: "station back" })
    const unknown = await cli.run(["executions", "retry-action", "jo-2", "nope", "--reason", "station back", "--yes"])
    expect(unknown.code).toBe(3)
    expect(unknown.stderr).toMatch(/action nope is not in the recipe/)
    expect((await cli.run(["executions", "retry-action", "jo-none", "tighten", "--reason", "station back", "--yes"])).code).toBe(3)
  })
})
