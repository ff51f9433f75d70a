import { Effect } from "effect"
import { Command, Flag } from "effect/cli"
import type { Answer, ReceivedCommand } from "../CommandAnswers.js"
import { readStationScript } from "../ScriptDecode.js"
import { type EmittedEvent, makeStation, type Station } from "../Station.js"
import { connectionFlags, mqttOptionsOf, topicsOf } from "./Connection.js"
import { EMIT_USAGE, emitFromStdin } from "./EmitLines.js"

const flags = {
  ...connectionFlags,
  script: Flag.String("script").pipe(Flag.withMetavar("FILE"), Flag.withDescription("The station script (JSON): scopes, command rules, events, schedule.")),
  scope: Flag.String("scope").pipe(
    Flag.withMetavar("SCOPE"),
    Flag.withDescription("Serve this scope instead of the script's (repeat for several)."),
    Flag.between(0, 64)
  ),
  stdin: Flag.Boolean("stdin").pipe(Flag.withDescription(`Read lines '${EMIT_USAGE}' from stdin and emit those events.`), Flag.withDefault(false)),
  verbose: Flag.Boolean("verbose").pipe(Flag.withDescription("A line on stderr for every command and event."), Flag.withDefault(false))
}

const say = (line: string) => process.stderr.write(`${line}\n`)

const commandLine = (command: ReceivedCommand, answer: Answer) => {
  const what = answer._tag === "Silent" ? "silent" : answer.error !== undefined ? `error '${answer.error}'` : `reply after ${answer.delayMs} ms`
  const rule = answer.rule === undefined ? "no rule" : `rule ${answer.rule}`
  return `command ${command.type} ${command.action ?? ""} job ${command.jobId ?? "-"} (${command.scope}): ${what} (${rule})`
}

const eventLine = (event: EmittedEvent) =>
  `event ${event.type} job ${event.jobId ?? "-"} (${event.scope}) id ${event.id}${event.copy > 1 ? ` copy ${event.copy}` : ""}`

const summary = (station: Station) => {
  const s = station.stats()
  return `station stopped: ${s.commands} commands (${s.replies} replies, ${s.errors} errors, ${s.silences} silent, ${s.unscripted} unscripted), ${s.events} events, ${s.copies} resent copies`
}

export const stationCommand = Command.make("station", flags, (f) =>
  Effect.gen(function* () {
    const script = yield* readStationScript(f.script)
    const scopes = f.scope.length > 0 ? f.scope : undefined
    const station = yield* makeStation({
      mqtt: yield* mqttOptionsOf(f.url),
      topics: yield* topicsOf(f.prefix, f.discriminator),
      script,
      scopes,
      ...(f.verbose ? { onCommand: (c: ReceivedCommand, a: Answer) => say(commandLine(c, a)), onEvent: (e: EmittedEvent) => say(eventLine(e)) } : {})
    })
    yield* Effect.addFinalizer(() => Effect.sync(() => say(summary(station))))
    say(`station up on ${f.url}: scopes ${station.scopes.join(", ")}; ${script.commands.length} command rules, ${script.events.size} events, ${script.schedule.length} scheduled (Ctrl-C stops it)`)
    if (f.stdin) yield* emitFromStdin(station)
    return yield* Effect.never
  }).pipe(Effect.scoped)
).pipe(Command.withDescription("A station over MQTT alone: answers the island's push commands and emits pull events as its script says."))

