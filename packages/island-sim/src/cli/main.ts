import { Cause, Effect, Exit } from "effect"
import { CliError, Command } from "effect/cli"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import packageJson from "../../package.json" with { type: "json" }
import { mesCommand } from "./MesCommand.js"
import { stationCommand } from "./StationCommand.js"

/**
 * `island-sim`: the sandbox's two commands. Exit codes: 0 done (for `mes`: every job order
 * completed), 1 job orders did not complete, 2 bad flags or input (a script or file with its
 * problems listed), 3 the island refused a configuration request, 4 the broker could not be
 * reached, 70 a bug.
 */
const command = Command.make("island-sim").pipe(
  Command.withDescription("A sandbox over the island's MQTT broker: a scripted station and an MES."),
  Command.withSubcommands([stationCommand, mesCommand])
)

const exitCodes: Readonly<Record<string, number>> = {
  JobsNotCompleted: 1,
  ScriptInvalid: 2,
  MesInputInvalid: 2,
  InvalidTopic: 2,
  ConfigError: 2,
  ConfigRefused: 3,
  MqttConnectError: 4,
  MqttSubscribeError: 4
}

const failed = (error: unknown) =>
  Effect.sync(() => {
    const tag = (error as { readonly _tag?: unknown })._tag
    const message = error instanceof Error ? error.message : String(error)
    process.stderr.write(`island-sim: ${message}\n`)
    return typeof tag === "string" ? (exitCodes[tag] ?? 70) : 70
  })

const program = Command.runWith(command, { version: packageJson.version })(process.argv.slice(2)).pipe(
  Effect.as(0),
  Effect.catch((error) => (CliError.isCliError(error) ? Effect.succeed(error._tag === "ShowHelp" && error.errors.length === 0 ? 0 : 2) : failed(error))),
  Effect.catchDefect((defect) => failed(new Error(`internal error: ${Cause.pretty(Cause.die(defect))}`)).pipe(Effect.as(70))),
  Effect.provide(NodeServices.layer)
)

NodeRuntime.runMain(program, {
  disableErrorReporting: true,
  teardown: (exit, onExit) => {
    const value: unknown = Exit.isSuccess(exit) ? exit.value : undefined
    // Ctrl-C ends the station: that is how it is stopped, not a failure.
    onExit(typeof value === "number" ? value : Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? 0 : 70)
  }
})
