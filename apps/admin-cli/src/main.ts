import { CliError, Command } from "effect/cli"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Config, Console, Effect, Exit, References } from "effect"
import packageJson from "../package.json" with { type: "json" }
import { consoleFor } from "./Colors.js"
import { command } from "./CommandTree.js"
import { ExitCode, exitCodeOf } from "./ExitCode.js"
import { hoistGlobalFlags } from "./GlobalFlags.js"
import { printable } from "./Table.js"

// The arguments after the runtime and the script; the command's name is the program's name.
const cli = Command.runWith(command, { version: packageJson.version })

const { argv, json } = hoistGlobalFlags(process.argv)

const describe = (error: unknown): { readonly tag: string; readonly message: string } => {
  // A ConfigError's cause names the variable on a line of its own ("Expected ...\n  at [\"VAR\"]"): one line here.
  if (error instanceof Config.ConfigError) return { tag: "ConfigError", message: `environment: ${error.cause.message.replace(/\n\s*/g, " ")}` }
  const e = error as { readonly _tag?: unknown; readonly message?: unknown }
  const tag = typeof e._tag === "string" ? e._tag : "Error"
  const message = typeof e.message === "string" && e.message.length > 0 ? e.message : tag
  return { tag, message }
}

/** One line on stderr per failure: JSON with `--json`, so a script can read why it failed. */
const report = (tag: string, message: string, code: number) =>
  Effect.sync(() => {
    // Line by line: a defect's stack keeps its lines, control characters from data are escaped.
    const text = message.split("\n").map(printable).join("\n")
    process.stderr.write(json ? `${JSON.stringify({ error: tag, message, exitCode: code })}\n` : `error: ${text}\n`)
    return code
  })

/**
 * effect/cli already printed the help, with the usage problem on stderr. The help of a command
 * group named without a subcommand (`microdcs-admin config`) is no error: exit 0, as before.
 */
const cliExit = (error: CliError.CliError): ExitCode =>
  error._tag === "ShowHelp" && error.errors.length === 0 ? ExitCode.ok : ExitCode.usage

const program = cli(argv.slice(2)).pipe(
  Effect.as<number>(ExitCode.ok),
  Effect.catch((error) => {
    if (CliError.isCliError(error)) return Effect.succeed(cliExit(error))
    const { tag, message } = describe(error)
    return report(tag, message, exitCodeOf(tag))
  }),
  Effect.catchDefect((defect) => report("Defect", `internal error: ${Cause.pretty(Cause.die(defect))}`, ExitCode.internal)),
  // The store logs reconnect attempts as warnings; on a CLI they would drown the one error line.
  // (`--log-level` still lowers it for the command.)
  Effect.provideService(References.MinimumLogLevel, "Error"),
  // The help is coloured by effect/cli on a terminal; piped, redirected or with NO_COLOR it must be plain text.
  (self) => Console.consoleWith((base) => Effect.provideService(self, Console.Console, consoleFor(base, process, process.env))),
  Effect.provide(NodeServices.layer)
)

NodeRuntime.runMain(program, {
  disableErrorReporting: true,
  teardown: (exit, onExit) => {
    // The teardown is generic in the program's result; ours is always the exit code.
    const value: unknown = Exit.isSuccess(exit) ? exit.value : undefined
    const code = typeof value === "number" ? value : Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? 130 : ExitCode.internal
    // A non-zero code exits at once; on 0 the process ends by itself once the connection is closed.
    onExit(code)
  }
})
