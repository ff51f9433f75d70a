import { Command, Options } from "@effect/cli"
import { Effect } from "effect"
import { dedupeHash } from "@microdcs/keyschema"
import { DedupeStore, Valkey } from "@microdcs/store"
import { confirmDestructive } from "../Confirm.js"
import { Missing } from "../ExitCode.js"
import { humanDuration } from "../Format.js"
import { island } from "../Island.js"
import { emit } from "../Output.js"
import { renderFields } from "../Table.js"
import { yesOption } from "../Yes.js"

const eventOptions = {
  source: Options.text("source").pipe(Options.withDescription("the CloudEvent source")),
  id: Options.text("id").pipe(Options.withDescription("the CloudEvent id"))
}

/** What the dedupe key of an event holds: `processing:{token}` while claimed, `done` (or `done:{kept reply}`) after. */
const dedupeEntry = (source: string, id: string) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    // leaseRemaining validates source and id exactly as a claim does, before any key is read.
    const remainingMs = yield* (yield* DedupeStore).leaseRemaining(source, id)
    const key = yield* valkey.key("dedupe", { hash: dedupeHash(source, id) })
    const value = yield* valkey.command("read dedupe entry", (c) => c.get(key))
    const state = value === null ? "absent" : value === "done" || value.startsWith("done:") ? "done" : value.startsWith("processing:") ? "processing" : "unknown"
    const token = value?.startsWith("processing:") ? value.slice("processing:".length) : null
    return { source, id, key, state, token, remainingMs } as const
  })

const check = Command.make("check", eventOptions, ({ source, id }) =>
  island(
    Effect.gen(function* () {
      const entry = yield* dedupeEntry(source, id)
      yield* emit(entry, () =>
        renderFields([
          ["source", source],
          ["id", id],
          ["key", entry.key],
          ["state", entry.state],
          ["token", entry.token],
          ["remaining", entry.state === "absent" ? null : humanDuration(entry.remainingMs)]
        ])
      )
      if (entry.state === "absent") return yield* new Missing({ message: `no dedupe entry for ${source} / ${id}` })
    })
  )
).pipe(Command.withDescription("whether an event is being processed or was processed, and for how long that holds (exit 3: unknown)"))

const forget = Command.make("forget", { ...eventOptions, yes: yesOption }, ({ source, id, yes }) =>
  island(
    Effect.gen(function* () {
      const valkey = yield* Valkey
      const entry = yield* dedupeEntry(source, id)
      if (entry.state === "absent") return yield* new Missing({ message: `no dedupe entry for ${source} / ${id}` })
      yield* confirmDestructive(yes, `Forget the dedupe entry of ${source} / ${id} (${entry.state})? A redelivery will be processed again.`)
      const deleted = yield* valkey.command("forget dedupe entry", (c) => c.del(entry.key))
      yield* emit({ source, id, key: entry.key, forgotten: deleted === 1, was: entry.state }, () =>
        deleted === 1 ? `forgot ${entry.state} entry of ${source} / ${id}` : `the entry of ${source} / ${id} expired meanwhile`
      )
    })
  )
).pipe(Command.withDescription("delete an event's dedupe entry so a redelivery is processed again (destructive)"))

export const dedupeCommand = Command.make("dedupe").pipe(
  Command.withDescription("CloudEvent deduplication entries"),
  Command.withSubcommands([check, forget])
)
