import { CliError, Command, Flag } from "effect/cli"
import { Effect, Option } from "effect"
import { JobOrderDao, JobResponseDao, Valkey } from "@microdcs/store"
import { confirmDestructive } from "../Confirm.js"
import { humanDuration, isoTime, parseDuration } from "../Format.js"
import { island } from "../Island.js"
import { emit } from "../Output.js"
import { findCandidates, lastChanges, oldEnough, type PurgeCandidate } from "../PurgeCandidates.js"
import { renderTable } from "../Table.js"
import { yesOption } from "../Yes.js"

const olderThanOption = Flag.String("older-than").pipe(
  Flag.withDescription("only job orders whose last change is at least this old: 7d, 12h, 1h30m, 90s"),
  Flag.mapEffect((text) => {
    const ms = parseDuration(text)
    return ms === undefined
      ? Effect.fail(new CliError.ValidationError({ message: `--older-than: '${text}' is not a duration such as 7d, 12h, 30m or 90s` }))
      : Effect.succeed(ms)
  }),
  Flag.optional
)

type Outcome = "deleted" | "would delete" | "skipped: changed meanwhile" | "already gone"

interface PurgeRow extends PurgeCandidate {
  readonly responseId: string | null
  readonly outcome: Outcome
}

/** The job order first, at the version read: a job revived meanwhile (a conflict) keeps its response. */
const purgeOne = (candidate: PurgeCandidate, responseId: string | null) =>
  Effect.gen(function* () {
    const orders = yield* JobOrderDao
    const responses = yield* JobResponseDao
    const order = yield* orders.delete({ id: candidate.id, expectedVersion: candidate.version, change: "purge" }).pipe(
      Effect.as<Outcome>("deleted"),
      Effect.catchTags({
        VersionConflict: () => Effect.succeed<Outcome>("skipped: changed meanwhile"),
        NotFound: () => Effect.succeed<Outcome>("already gone")
      })
    )
    if (order !== "skipped: changed meanwhile" && responseId !== null) {
      yield* responses.delete({ id: responseId, change: "purge" }).pipe(Effect.catchTag("NotFound", () => Effect.void))
    }
    return order
  })

const responseOf = (orderId: string) =>
  Effect.flatMap(JobResponseDao, (dao) => dao.byOrder(orderId)).pipe(
    Effect.map((r): string | null => r.id),
    Effect.catchTag("NotFound", () => Effect.succeed(null))
  )

export const purgeCommand = Command.make(
  "purge",
  {
    scope: Flag.String("scope"),
    olderThan: olderThanOption,
    dryRun: Flag.Boolean("dry-run").pipe(Flag.withDescription("list what would be deleted, delete nothing"), Flag.withDefault(false)),
    yes: yesOption
  },
  (o) =>
    island(
      Effect.gen(function* () {
        const valkey = yield* Valkey
        yield* valkey.key("jobOrderList", { scope: o.scope }) // bad input fails before the scan
        const now = Date.now()
        // Every write appends a change entry: the last one of a job order dates its clearing.
        const { last, oldest } = yield* lastChanges(o.scope)
        const candidates = (yield* findCandidates(o.scope))
          .map((c): PurgeCandidate => ({ ...c, lastChangeAt: last.get(c.id) ?? null }))
          .filter((c) => Option.isNone(o.olderThan) || oldEnough(c.lastChangeAt, oldest, o.olderThan.value, now))
        const withResponses = yield* Effect.forEach(candidates, (c) => Effect.map(responseOf(c.id), (responseId) => ({ ...c, responseId })))
        const responseCount = withResponses.filter((c) => c.responseId !== null).length
        if (!o.dryRun && withResponses.length > 0) {
          yield* confirmDestructive(o.yes, `Delete ${withResponses.length} cleared job order(s) and ${responseCount} job response(s) of scope ${o.scope}?`)
        }
        const rows: ReadonlyArray<PurgeRow> = o.dryRun
          ? withResponses.map((c) => ({ ...c, outcome: "would delete" as const }))
          : yield* Effect.forEach(withResponses, (c) => Effect.map(purgeOne(c, c.responseId), (outcome) => ({ ...c, outcome })))
        const deleted = rows.filter((r) => r.outcome === "deleted").length
        yield* emit({ scope: o.scope, dryRun: o.dryRun, deleted, jobOrders: rows }, () =>
          [
            renderTable(
              [
                { header: "ID", value: (r: PurgeRow) => r.id },
                { header: "STATE", value: (r) => r.state ?? "(malformed)" },
                { header: "EXPIRES IN", value: (r) => (r.expiresInMs === null ? null : humanDuration(r.expiresInMs)), align: "right" },
                { header: "LAST CHANGE", value: (r) => isoTime(r.lastChangeAt) },
                { header: "RESPONSE", value: (r) => r.responseId },
                { header: "RESULT", value: (r) => r.outcome }
              ],
              rows,
              `(nothing to purge in scope ${o.scope})`
            ),
            ...(rows.length > 0 ? [`${o.dryRun ? "would delete" : "deleted"} ${o.dryRun ? rows.length : deleted} job order(s)`] : [])
          ].join("\n")
        )
      })
    )
).pipe(Command.withDescription("delete the retired or cleared job orders of a scope and their responses (destructive)"))
