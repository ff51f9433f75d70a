import { Command, Flag } from "effect/cli"
import { Effect, Option } from "effect"
import { ChangeStream, PublisherCursors, ScopeRegistry, Valkey } from "@microdcs/store"
import { confirmDestructive } from "../Confirm.js"
import { island } from "../Island.js"
import { emit } from "../Output.js"
import { renderTable } from "../Table.js"
import { yesOption } from "../Yes.js"

/** How far `behind` is counted; past it the row says "more than". Counting reads the entries. */
const BEHIND_CAP = 1000

interface CursorRow {
  readonly scope: string
  readonly cursor: string | null
  readonly latest: string | null
  /** Change entries after the cursor, up to the cap; `behindCapped` when there are more. */
  readonly behind: number
  readonly behindCapped: boolean
}

const cursorRow = (scope: string, cursor: string | null) =>
  Effect.gen(function* () {
    const changes = yield* ChangeStream
    const latest = Option.getOrNull(yield* changes.latestId(scope))
    // An absent cursor means the publisher starts from the beginning of the stream, as "0" does.
    const page = yield* changes.read(scope, { after: cursor ?? "0", count: BEHIND_CAP + 1 })
    const behind = Math.min(page.entries.length, BEHIND_CAP)
    return { scope, cursor, latest, behind, behindCapped: page.entries.length > BEHIND_CAP } satisfies CursorRow
  })

const cursors = Command.make("cursors", {}, () =>
  island(
    Effect.gen(function* () {
      const stored = yield* (yield* PublisherCursors).getAll
      const registered = yield* (yield* ScopeRegistry).list
      const scopes = [...new Set([...registered, ...stored.keys()])].sort()
      const rows = yield* Effect.forEach(scopes, (scope) => cursorRow(scope, stored.get(scope) ?? null))
      yield* emit({ cursors: rows }, () =>
        renderTable(
          [
            { header: "SCOPE", value: (r: CursorRow) => r.scope },
            { header: "CURSOR", value: (r) => r.cursor ?? "(none)" },
            { header: "LATEST CHANGE", value: (r) => r.latest },
            { header: "BEHIND", value: (r) => (r.behindCapped ? `>${BEHIND_CAP}` : r.behind), align: "right" }
          ],
          rows,
          "(no scopes registered)"
        )
      )
    })
  )
).pipe(Command.withDescription("the publisher's cursor per scope and how many change entries it has not published"))

const republish = Command.make("republish", { scope: Flag.String("scope"), yes: yesOption }, ({ scope, yes }) =>
  island(
    Effect.gen(function* () {
      const valkey = yield* Valkey
      yield* valkey.key("changes", { scope }) // a scope that could never exist is bad input
      const previous = Option.getOrNull(yield* (yield* PublisherCursors).get(scope))
      yield* confirmDestructive(yes, `Reset the publisher cursor of ${scope} (now ${previous ?? "none"}) to 0, so every change still in the stream is published again?`)
      yield* (yield* PublisherCursors).rewind(scope)
      yield* emit({ scope, previous, cursor: "0" }, () => `publisher cursor of ${scope} reset from ${previous ?? "(none)"} to 0`)
    })
  )
).pipe(Command.withDescription("reset a scope's publisher cursor to 0 so the publisher republishes it (asks for confirmation)"))

export const publisherCommand = Command.make("publisher").pipe(
  Command.withDescription("the change publisher's progress"),
  Command.withSubcommands([cursors, republish])
)
