import { Command, Flag } from "effect/cli"
import { Effect, Option } from "effect"
import { DeadLetterRedrive, type DeadLetterEntry, type DeadLetterStreamInfo, type RedriveOutcome, ValkeyStreams } from "@microdcs/store"
import { confirmDestructive } from "../Confirm.js"
import { UsageError } from "../ExitCode.js"
import { humanDuration, isoTime } from "../Format.js"
import { island } from "../Island.js"
import { emit } from "../Output.js"
import { scopesOrAll, streamInfo, type StreamInfo, streamKey, streamKinds } from "../StreamStats.js"
import { renderTable } from "../Table.js"
import { yesOption } from "../Yes.js"
import { positiveLimit } from "./JobOrders.js"

const scopeOption = Flag.String("scope").pipe(Flag.withDescription("one scope; default every registered scope"), Flag.optional)

const allStreams = (scope: Option.Option<string>) =>
  Effect.gen(function* () {
    const scopes = yield* scopesOrAll(Option.getOrUndefined(scope))
    return yield* Effect.forEach(scopes.flatMap((s) => streamKinds.map((kind) => [kind, s] as const)), ([kind, s]) => streamInfo(kind, s))
  })

interface InfoRow {
  readonly stream: StreamInfo
  readonly group: StreamInfo["groups"][number] | undefined
}

const info = Command.make("info", { scope: scopeOption }, ({ scope }) =>
  island(
    Effect.gen(function* () {
      const streams = yield* allStreams(scope)
      const rows: ReadonlyArray<InfoRow> = streams.flatMap((stream) =>
        stream.groups.length === 0 ? [{ stream, group: undefined }] : stream.groups.map((group): InfoRow => ({ stream, group }))
      )
      yield* emit({ streams }, () =>
        renderTable(
          [
            { header: "SCOPE", value: (r: InfoRow) => r.stream.scope },
            { header: "STREAM", value: (r) => r.stream.kind },
            { header: "LENGTH", value: (r) => (r.stream.type === "stream" || r.stream.type === "none" ? r.stream.length : `(${r.stream.type})`), align: "right" },
            { header: "GROUP", value: (r) => r.group?.group },
            { header: "CONSUMERS", value: (r) => r.group?.consumers, align: "right" },
            { header: "PENDING", value: (r) => r.group?.pending, align: "right" },
            { header: "LAG", value: (r) => (r.group ? (r.group.lag ?? "?") : undefined), align: "right" },
            { header: "LAST DELIVERED", value: (r) => r.group?.lastDeliveredId }
          ],
          rows,
          "(no scopes registered)"
        )
      )
    })
  )
).pipe(Command.withDescription("length, consumer groups, pending entries and lag of the change, SFC work and execution log commit streams"))

interface PendingRow {
  readonly scope: string
  readonly stream: string
  readonly group: string
  readonly id: string
  readonly consumer: string
  readonly idleMs: number
  readonly deliveries: number
}

const pending = Command.make(
  "pending",
  {
    scope: scopeOption,
    group: Flag.String("group").pipe(Flag.withDescription("only this consumer group"), Flag.optional),
    limit: Flag.Int("limit").pipe(Flag.withDescription("at most this many entries per group"), Flag.withDefault(100))
  },
  (o) =>
    island(
      Effect.gen(function* () {
        const limit = yield* positiveLimit(o.limit)
        const streams = yield* ValkeyStreams
        const infos = yield* allStreams(o.scope)
        const rows: Array<PendingRow> = []
        for (const s of infos) {
          for (const g of s.groups) {
            if (Option.isSome(o.group) && g.group !== o.group.value) continue
            if (g.pending === 0) continue
            const entries = yield* streams.pendingEntries(s.key, g.group, { count: limit })
            rows.push(...entries.map((e) => ({ scope: s.scope, stream: s.kind, group: g.group, ...e })))
          }
        }
        yield* emit({ pending: rows }, () =>
          renderTable(
            [
              { header: "SCOPE", value: (r: PendingRow) => r.scope },
              { header: "STREAM", value: (r) => r.stream },
              { header: "GROUP", value: (r) => r.group },
              { header: "ID", value: (r) => r.id },
              { header: "CONSUMER", value: (r) => r.consumer },
              { header: "IDLE", value: (r) => humanDuration(r.idleMs), align: "right" },
              { header: "DELIVERIES", value: (r) => r.deliveries, align: "right" }
            ],
            rows,
            "(no pending entries)"
          )
        )
      })
    )
).pipe(Command.withDescription("entries delivered to a consumer and not yet acknowledged"))

const deadLetterColumns = [
  { header: "ID", value: (e: DeadLetterEntry) => e.id },
  { header: "ORIGINAL ID", value: (e: DeadLetterEntry) => e.originalId },
  { header: "GROUP", value: (e: DeadLetterEntry) => e.group },
  { header: "CONSUMER", value: (e: DeadLetterEntry) => e.consumer },
  { header: "DELIVERIES", value: (e: DeadLetterEntry) => e.deliveries, align: "right" as const },
  { header: "MOVED", value: (e: DeadLetterEntry) => isoTime(e.movedAt) },
  { header: "ERROR", value: (e: DeadLetterEntry) => e.error }
]

const deadLetters = Command.make(
  "deadletters",
  {
    kind: Flag.String("kind").pipe(Flag.withDescription("the poller kind: changes, sfc or dagcommit (the execution log's commit requests)"), Flag.optional),
    scope: Flag.String("scope").pipe(Flag.optional),
    limit: Flag.Int("limit").pipe(Flag.withDefault(100))
  },
  (o) =>
    island(
      Effect.gen(function* () {
        const limit = yield* positiveLimit(o.limit)
        const streams = yield* ValkeyStreams
        if (Option.isSome(o.kind) && Option.isSome(o.scope)) {
          const kind = o.kind.value
          const scope = o.scope.value
          const page = yield* streams.readDeadLetters(kind, scope, { count: limit }).pipe(
            // No dead-letter stream yet is an empty list, not an unknown id.
            Effect.catchTag("NotFound", () => Effect.succeed({ entries: [], next: null }))
          )
          yield* emit({ kind, scope, entries: page.entries, more: page.next !== null }, () =>
            renderTable(deadLetterColumns, page.entries, `(no dead letters of ${kind} in ${scope})`)
          )
          return
        }
        const all = yield* streams.listDeadLetters(Option.getOrUndefined(o.kind))
        const scope = Option.getOrUndefined(o.scope)
        const shown = scope === undefined ? all : all.filter((d) => d.scope === scope)
        yield* emit({ deadLetterStreams: shown }, () =>
          renderTable(
            [
              { header: "KIND", value: (d: DeadLetterStreamInfo) => d.kind },
              { header: "SCOPE", value: (d) => d.scope },
              { header: "ENTRIES", value: (d) => d.length, align: "right" }
            ],
            shown,
            "(no dead letters)"
          )
        )
      })
    )
).pipe(Command.withDescription("dead-letter streams, or the entries of one with --kind and --scope"))

const trim = Command.make("trim", { scope: scopeOption, yes: yesOption }, ({ scope, yes }) =>
  island(
    Effect.gen(function* () {
      const streams = yield* ValkeyStreams
      const scopes = yield* scopesOrAll(Option.getOrUndefined(scope))
      const keys = yield* Effect.forEach(scopes, (s) => Effect.map(streamKey("sfc", s), (key) => [s, key] as const))
      yield* confirmDestructive(yes, `Trim the SFC work streams of ${scopes.length} scope(s) to what every group has acknowledged?`)
      // Only the work streams: changes:{scope} is followed by the publisher's cursor, which
      // no group records, so a trim by group state could drop entries it has not published.
      const results = yield* Effect.forEach(keys, ([s, key]) => Effect.map(streams.trim(key), (r) => ({ scope: s, stream: "sfc", ...r })))
      yield* emit({ trimmed: results }, () =>
        renderTable(
          [
            { header: "SCOPE", value: (r: (typeof results)[number]) => r.scope },
            { header: "STREAM", value: (r) => r.stream },
            { header: "REMOVED", value: (r) => r.removed, align: "right" },
            { header: "BELOW", value: (r) => r.threshold }
          ],
          results,
          "(no scopes registered)"
        )
      )
    })
  )
).pipe(Command.withDescription("trim the SFC work streams to what every group acknowledged (destructive)"))

const redrive = Command.make(
  "redrive",
  {
    kind: Flag.String("kind").pipe(Flag.withDescription("the poller kind: changes, sfc or dagcommit (the execution log's commit requests)")),
    scope: Flag.String("scope"),
    id: Flag.String("id").pipe(Flag.withDescription("the dead letter's id (see streams deadletters)"), Flag.optional),
    all: Flag.Boolean("all").pipe(Flag.withDescription("every dead letter of the kind and scope"), Flag.withDefault(false)),
    yes: yesOption
  },
  (o) =>
    island(
      Effect.gen(function* () {
        if (Option.isSome(o.id) === o.all) {
          return yield* new UsageError({ message: "give either --id ID or --all" })
        }
        const redrive = yield* DeadLetterRedrive
        const what = Option.isSome(o.id) ? `dead letter ${o.id.value}` : `every dead letter of ${o.kind} in ${o.scope}`
        yield* confirmDestructive(o.yes, `Move ${what} back to its stream, to be processed again?`)
        const outcomes: ReadonlyArray<RedriveOutcome> = Option.isSome(o.id)
          ? [yield* redrive.redrive(o.kind, o.scope, o.id.value)]
          : (yield* redrive.redriveAll(o.kind, o.scope)).outcomes
        const redriven = outcomes.filter((r) => r.status === "redriven").length
        yield* emit({ kind: o.kind, scope: o.scope, redriven, skipped: outcomes.length - redriven, outcomes }, () =>
          renderTable(
            [
              { header: "DEAD LETTER", value: (r: RedriveOutcome) => r.deadLetterId },
              { header: "STATUS", value: (r) => (r.status === "skipped" ? "skipped (no fields)" : r.status) },
              { header: "STREAM", value: (r) => r.stream },
              { header: "NEW ID", value: (r) => r.newId }
            ],
            outcomes,
            `(no dead letters of ${o.kind} in ${o.scope})`
          )
        )
      })
    )
).pipe(Command.withDescription("move dead letters back to their stream so they are processed again (asks for confirmation)"))

export const streamsCommand = Command.make("streams").pipe(
  Command.withDescription("the change, SFC work and execution log commit streams: info, pending entries, dead letters, redrive, trim"),
  Command.withSubcommands([info, pending, deadLetters, redrive, trim])
)
