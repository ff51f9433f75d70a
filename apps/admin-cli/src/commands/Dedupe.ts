import { Command, Flag } from "effect/cli"
import { Effect } from "effect"
import { DedupeEntries } from "@microdcs/store"
import { confirmDestructive } from "../Confirm.js"
import { Missing } from "../ExitCode.js"
import { humanDuration } from "../Format.js"
import { island } from "../Island.js"
import { emit } from "../Output.js"
import { renderFields } from "../Table.js"
import { yesOption } from "../Yes.js"

const eventOptions = {
  source: Flag.String("source").pipe(Flag.withDescription("the CloudEvent source")),
  id: Flag.String("id").pipe(Flag.withDescription("the CloudEvent id"))
}

/** What the dedupe key of an event holds, as the operator reads it: absent, processing (with its token), done or unknown. */
const dedupeEntry = (source: string, id: string) =>
  Effect.gen(function* () {
    const { key, state, remainingMs } = yield* (yield* DedupeEntries).inspect(source, id)
    const token = state._tag === "Processing" ? state.token : null
    return { source, id, key, state: state._tag.toLowerCase() as Lowercase<typeof state._tag>, token, remainingMs } as const
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
      const entry = yield* dedupeEntry(source, id)
      if (entry.state === "absent") return yield* new Missing({ message: `no dedupe entry for ${source} / ${id}` })
      yield* confirmDestructive(yes, `Forget the dedupe entry of ${source} / ${id} (${entry.state})? A redelivery will be processed again.`)
      const forgotten = yield* (yield* DedupeEntries).forget(source, id)
      yield* emit({ source, id, key: entry.key, forgotten, was: entry.state }, () =>
        forgotten ? `forgot ${entry.state} entry of ${source} / ${id}` : `the entry of ${source} / ${id} expired meanwhile`
      )
    })
  )
).pipe(Command.withDescription("delete an event's dedupe entry so a redelivery is processed again (destructive)"))

export const dedupeCommand = Command.make("dedupe").pipe(
  Command.withDescription("CloudEvent deduplication entries"),
  Command.withSubcommands([check, forget])
)
