import * as NodeServices from "@effect/platform-node/NodeServices"
import { Command, TerminalCapabilities } from "effect/cli"
import { Console, Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import packageJson from "../package.json" with { type: "json" }
import { command } from "../src/CommandTree.js"

/**
 * The help text of every command, in process (`Command.runWith`, as main.ts runs it). @effect/cli
 * 0.77 was patched for two faults of its help; effect/cli must not bring them back:
 * - a nested command's usage repeated its parent ("microdcs-admin config config references list");
 * - every option's help opened with its type's generic sentence ("A user-defined piece of text.",
 *   "A true or false value.") before the option's own words.
 */
interface Run {
  readonly stdout: string
  readonly stderr: string
  readonly exit: Exit.Exit<void, unknown>
}

const plainTerminal = { canColor: false, canAnimate: false, canPrompt: false }

const run = async (args: ReadonlyArray<string>): Promise<Run> => {
  const out: Array<string> = []
  const err: Array<string> = []
  const console: Console.Console = {
    ...globalThis.console,
    log: (...a: ReadonlyArray<unknown>) => void out.push(a.join(" ")),
    error: (...a: ReadonlyArray<unknown>) => void err.push(a.join(" "))
  }
  const exit = await Effect.runPromise(
    Command.runWith(command, { version: packageJson.version })(args).pipe(
      Effect.exit,
      Effect.provideService(Console.Console, console),
      Effect.provideService(TerminalCapabilities.TerminalCapabilities, plainTerminal),
      Effect.provide(NodeServices.layer)
    )
  )
  return { stdout: out.join("\n"), stderr: err.join("\n"), exit }
}

/** Every command path of the tree, the root's (empty) first. */
const commandPaths = (cmd: Command.Command.Any, path: ReadonlyArray<string> = []): Array<ReadonlyArray<string>> => [
  path,
  ...cmd.subcommands.flatMap((group) => group.commands.flatMap((child) => commandPaths(child, [...path, child.name])))
]

/** The text of one section (`USAGE`, `FLAGS`, ...): its indented lines, up to the next heading. */
const sectionOf = (help: string, title: string): string => {
  const lines = help.split("\n")
  const start = lines.indexOf(title)
  if (start < 0) return ""
  const end = lines.findIndex((line, i) => i > start && /^\S/.test(line))
  return lines.slice(start + 1, end < 0 ? undefined : end).join("\n")
}

/** The help line of one flag, e.g. `--kind choice    the ISA-95 reference list ...`. */
const flagLine = (help: string, flag: string): string | undefined =>
  help.split("\n").find((line) => line.trimStart().startsWith(`${flag} `) || line.trimStart().startsWith(`${flag},`))

describe("help text", () => {
  const paths = commandPaths(command)

  it("names each command's path once in its usage, for every command of the tree", async () => {
    expect(paths.length).toBeGreaterThan(60)
    for (const path of paths) {
      const help = await run([...path, "--help"])
      expect(Exit.isSuccess(help.exit), path.join(" ")).toBe(true)
      expect(sectionOf(help.stdout, "USAGE").trim()).toMatch(new RegExp(`^${["microdcs-admin", ...path].join(" ")} (<subcommand> )?\\[flags\\]`))
      // No command of the path repeated next to itself ("config config"), anywhere in the text.
      for (const name of path) expect(help.stdout, path.join(" ")).not.toContain(`${name} ${name} `)
    }
  })

  it("shows a nested group's and a nested command's usage with the parents once", async () => {
    const group = await run(["config", "references", "--help"])
    expect(sectionOf(group.stdout, "USAGE").trim()).toBe("microdcs-admin config references <subcommand> [flags]")
    expect(sectionOf(group.stdout, "SUBCOMMANDS")).toMatch(/^\s+list\s+the reference lists of a scope/m)
    const leaf = await run(["config", "references", "list", "--help"])
    expect(sectionOf(leaf.stdout, "USAGE").trim()).toBe("microdcs-admin config references list [flags]")
    const action = await run(["joborders", "abort", "--help"])
    expect(sectionOf(action.stdout, "USAGE").trim()).toBe("microdcs-admin joborders abort [flags] <job-order-id>")
  })

  it("gives each flag its own description, without a type's generic sentence; a choice lists its values", async () => {
    for (const path of paths) {
      const help = (await run([...path, "--help"])).stdout
      expect(help, path.join(" ")).not.toContain("A user-defined piece of text.")
      expect(help, path.join(" ")).not.toContain("A true or false value.")
      expect(help, path.join(" ")).not.toContain("An integer.")
    }
    const list = (await run(["config", "references", "list", "--help"])).stdout
    expect(flagLine(list, "--kind")).toMatch(
      /^\s+--kind choice\s+the ISA-95 reference list \(choices: equipment, materialclass, materialdefinition, personnel, physicalasset\)$/
    )
    const abort = (await run(["joborders", "abort", "--help"])).stdout
    expect(flagLine(abort, "--comment")).toMatch(/^\s+--comment string\s+a comment stored with the transition$/)
    expect(flagLine(abort, "--yes")).toMatch(/^\s+--yes, -y\s+confirm without asking \(required when stdin is not a terminal\)$/)
    // The global flags, inherited by every subcommand, in their own words too.
    expect(flagLine(abort, "--url")).toMatch(/^\s+--url URL\s+The island's Valkey: redis:\/\/\[user:password@\]host:port\[\/db\]/)
    expect(flagLine(abort, "--json")).toMatch(/^\s+--json\s+Print machine-readable JSON on stdout/)
    const pending = (await run(["streams", "pending", "--help"])).stdout
    expect(flagLine(pending, "--limit")).toMatch(/^\s+--limit integer\s+at most this many entries per group$/)
  })

  it("a usage problem shows the command's help on stdout and the problem on stderr", async () => {
    const missing = await run(["joborders", "list"])
    expect(Exit.isFailure(missing.exit)).toBe(true)
    expect(sectionOf(missing.stdout, "USAGE").trim()).toBe("microdcs-admin joborders list [flags]")
    expect(missing.stderr).toContain("Missing required flag: --scope")
  })
})
