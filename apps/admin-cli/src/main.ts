import { Command, ValidationError } from "effect/cli"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, ConfigError, Console, Effect, Exit, Logger, LogLevel } from "effect"
import packageJson from "../package.json" with { type: "json" }
import { consoleFor } from "./Colors.js"
import { ExitCode, exitCodeOf } from "./ExitCode.js"
import { hoistGlobalFlags } from "./GlobalFlags.js"
import { root } from "./Root.js"
import { printable } from "./Table.js"
import { configCommand } from "./commands/Config.js"
import { dedupeCommand } from "./commands/Dedupe.js"
import { executionsCommand } from "./commands/Executions.js"
import { indexCommand } from "./commands/Index.js"
import { jobOrdersCommand } from "./commands/JobOrders.js"
import { journalCommand } from "./commands/Journal.js"
import { jobResponsesCommand } from "./commands/JobResponses.js"
import { leasesCommand } from "./commands/Leases.js"
import { publisherCommand } from "./commands/Publisher.js"
import { purgeCommand } from "./commands/Purge.js"
import { recipesCommand } from "./commands/Recipes.js"
import { scopesCommand } from "./commands/Scopes.js"
import { streamsCommand } from "./commands/Streams.js"
import { triggersCommand } from "./commands/Triggers.js"

const command = root.pipe(
  Command.withDescription("Operator's tool for one microdcs island: inspect and repair its Valkey data."),
  Command.withSubcommands([
    scopesCommand,
    jobOrdersCommand,
    jobResponsesCommand,
    executionsCommand,
    recipesCommand,
    configCommand,
    streamsCommand,
    dedupeCommand,
    leasesCommand,
    publisherCommand,
    purgeCommand,
    indexCommand,
    journalCommand,
    triggersCommand
  ])
)

const cli = Command.run(command, { name: "microdcs-admin", version: packageJson.version })

const { argv, json } = hoistGlobalFlags(process.argv)

const describe = (error: unknown): { readonly tag: string; readonly message: string } => {
  // A ConfigError's message lacks the variable; its string form names it.
  if (ConfigError.isConfigError(error)) return { tag: "ConfigError", message: `environment: ${String(error).replace(/^\(|\)$/g, "")}` }
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

const program = cli(argv).pipe(
  Effect.as<number>(ExitCode.ok),
  Effect.catch((error) => {
    // @effect/cli already printed the usage problem with the help text.
    if (ValidationError.isValidationError(error)) return Effect.succeed(ExitCode.usage)
    const { tag, message } = describe(error)
    return report(tag, message, exitCodeOf(tag))
  }),
  Effect.catchDefect((defect) => report("Defect", `internal error: ${Cause.pretty(Cause.die(defect))}`, ExitCode.internal)),
  // The store logs reconnect attempts as warnings; on a CLI they would drown the one error line.
  Logger.withMinimumLogLevel(LogLevel.Error),
  // The help is coloured by @effect/cli; piped, redirected or with NO_COLOR it must be plain text.
  (self) => Console.consoleWith((base) => Effect.withConsole(self, consoleFor(base, process, process.env))),
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
