import { fileURLToPath } from "node:url"
import { Effect, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { inject } from "vitest"
import { JobAcceptanceDao } from "@microdcs/store"
import { freePort, randomPrefix } from "@microdcs/test-utils"
import { childEnv, type Cli, exec, hasScript, makeCli } from "./Cli.js"
import { SCOPE, seedIsland, withStore } from "./Seed.js"

// Connection settings, usage errors, the source entry point and the interactive prompt.
const url = inject("valkeyUrl")
const prefix = randomPrefix("cli-conn")
const appDir = fileURLToPath(new URL("..", import.meta.url))
let cli: Cli

beforeAll(async () => {
  ;[cli] = await Promise.all([makeCli(url, prefix), seedIsland(url, prefix)])
})
afterAll(() => cli?.dispose())

describe("connection and usage", () => {
  it("exit 4 when Valkey cannot be reached, with the reason on stderr (JSON with --json)", async () => {
    const closed = `redis://127.0.0.1:${await freePort()}`
    const [table, json] = await Promise.all([
      cli.run(["scopes", "list"], { VALKEY_URL: closed }),
      cli.run(["scopes", "list", "--json", "--url", closed])
    ])
    expect(table.code).toBe(4)
    expect(table.stdout).toBe("")
    expect(table.stderr).toMatch(/^error: /)
    expect(json.code).toBe(4)
    expect(JSON.parse(json.stderr)).toMatchObject({ error: "StoreUnavailable", exitCode: 4 })
  })

  it("exit 2 for usage errors: an unknown command, a missing option, a bad variable or prefix", async () => {
    const [unknown, missingOption, badVariable, badPrefix] = await Promise.all([
      cli.run(["scopes", "lst"]),
      cli.run(["joborders", "list"]),
      cli.run(["scopes", "list"], { VALKEY_COMMAND_TIMEOUT_MS: "soon" }),
      cli.run(["scopes", "list", "--prefix", "a:b"])
    ])
    expect([unknown.code, missingOption.code, badVariable.code, badPrefix.code]).toEqual([2, 2, 2, 2])
    expect(missingOption.stderr).toContain("--scope")
    expect(badVariable.stderr).toContain("VALKEY_COMMAND_TIMEOUT_MS")
  })

  it("--url and --prefix anywhere on the line override the environment", async () => {
    const args = ["config", "acceptance", "get", "--scope", SCOPE, "--json", "--prefix", prefix, "--url", url]
    const json = await exec(process.execPath, [cli.main, ...args], childEnv({ VALKEY_URL: "redis://127.0.0.1:1", VALKEY_PREFIX: "elsewhere" }))
    expect(json.code).toBe(0)
    expect(JSON.parse(json.stdout)).toEqual({ scope: SCOPE, limit: 10 })
  })

  it("runs from source as `pnpm start` does (tsx, source condition)", async () => {
    const result = await exec(
      process.execPath,
      ["--import", "tsx/esm", "--conditions=source", "src/main.ts", "config", "acceptance", "get", "--scope", SCOPE, "--json"],
      childEnv({ VALKEY_URL: url, VALKEY_PREFIX: prefix }),
      appDir
    )
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout)).toEqual({ scope: SCOPE, limit: 10 })
  })
})

describe.skipIf(!hasScript)("confirmation on a terminal", () => {
  /** Runs the CLI on a pseudo-terminal (util-linux `script`), typing `answer` at the prompt. */
  const onTerminal = (args: ReadonlyArray<string>, answer: string) =>
    exec(
      "sh",
      ["-c", `(sleep 1; printf '${answer}') | script -qec "$0" /dev/null`, [process.execPath, cli.main, ...args].map((a) => `'${a}'`).join(" ")],
      childEnv({ VALKEY_URL: url, VALKEY_PREFIX: prefix, TERM: "dumb" })
    )
  const limit = () => withStore(url, prefix, Effect.flatMap(JobAcceptanceDao, (dao) => dao.get(SCOPE)))

  it("asks; 'n' changes nothing (exit 5), 'y' goes ahead", async () => {
    const declined = await onTerminal(["config", "acceptance", "clear", "--scope", SCOPE], "n")
    expect(declined.stdout).toContain("Clear the acceptance limit 10 of scope")
    expect(declined.code).toBe(5)
    expect(await limit()).toEqual(Option.some(10))
    const accepted = await onTerminal(["config", "acceptance", "clear", "--scope", SCOPE], "y")
    expect(accepted.code).toBe(0)
    expect(await limit()).toEqual(Option.none())
  })
})
