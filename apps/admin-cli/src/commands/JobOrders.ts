import { Argument, Command, Flag } from "effect/cli"
import { Effect, Result, Option } from "effect"
import { allJobStates, decodeJobOrderRecord, firstWorkMasterId, fromNormalizedName, normalizedName } from "@microdcs/job-state"
import { type ListedJobOrder, listJobOrders } from "@microdcs/job-control"
import { JobOrderDao, JobOrderRetention, type StoredDocument } from "@microdcs/store"
import { UsageError } from "../ExitCode.js"
import { jobOrderActionCommands } from "./JobOrderActions.js"
import { searchCommand } from "./JobOrderSearch.js"
import { humanDuration } from "../Format.js"
import { changeHistory, renderHistory } from "../History.js"
import { island } from "../Island.js"
import { parseJson, prettyJson } from "../Json.js"
import { emit } from "../Output.js"
import { renderFields, renderTable, section, sections } from "../Table.js"

/** What the CLI shows of a stored job order; a malformed document is shown, not fatal. */
interface JobOrderView {
  readonly id: string
  readonly scope: string
  readonly version: number
  readonly state: string | null
  readonly priority: number | null
  readonly workMasterId: string | null
  readonly comment: string | null
  readonly problem: string | null
}

const view = (stored: StoredDocument): JobOrderView => {
  const decoded = decodeJobOrderRecord(stored.doc)
  const base = { id: stored.id, scope: stored.scope, version: stored.version }
  if (Result.isFailure(decoded)) {
    return { ...base, state: null, priority: null, workMasterId: null, comment: null, problem: decoded.failure.message }
  }
  const { jobOrder, state, comment } = decoded.success
  return {
    ...base,
    state: normalizedName(state),
    priority: jobOrder.Priority ?? 0,
    workMasterId: firstWorkMasterId(jobOrder) ?? null,
    comment: comment ?? null,
    problem: null
  }
}

const stateNames = allJobStates.map(normalizedName)

const stateOption = Flag.String("state").pipe(
  Flag.withDescription(`only job orders in this state (normalized name: ${stateNames.join(", ")})`),
  Flag.optional
)
const limitOption = Flag.Int("limit").pipe(Flag.withDescription("at most this many rows"), Flag.withDefault(100))

export const positiveLimit = (limit: number) =>
  limit > 0 ? Effect.succeed(limit) : Effect.fail(new UsageError({ message: `--limit must be a positive integer, got ${limit}` }))

const checkState = (state: Option.Option<string>) =>
  Option.match(state, {
    onNone: () => Effect.succeed(undefined),
    onSome: (name) =>
      Result.isSuccess(fromNormalizedName(name))
        ? Effect.succeed(name)
        : Effect.fail(new UsageError({ message: `unknown state '${name}'; one of ${stateNames.join(", ")}` }))
  })

const afterOption = Flag.String("after").pipe(
  Flag.withMetavar("CURSOR"),
  Flag.withDescription("go on where a previous page ended: its 'next' (shown under the table, and in --json)"),
  Flag.optional
)

/** A cursor from a previous page: a position in the scope's list. */
const checkAfter = (after: Option.Option<string>) =>
  Option.match(after, {
    onNone: () => Effect.succeed(0),
    onSome: (text) =>
      /^\d{1,15}$/.test(text)
        ? Effect.succeed(Number(text))
        : Effect.fail(new UsageError({ message: `--after takes the 'next' cursor a previous page printed, got '${text}'` }))
  })

/** A row of the list: the document's view, or what the list alone says when the document is missing. */
const listedView = (listed: ListedJobOrder) =>
  listed.stored === undefined
    ? { id: listed.id, version: 0, state: null, priority: null, workMasterId: null, comment: null, problem: "listed, but the document is missing", listedPriority: listed.listedPriority }
    : { ...view(listed.stored), listedPriority: listed.listedPriority }

const list = Command.make("list", { scope: Flag.String("scope"), state: stateOption, limit: limitOption, after: afterOption }, (o) =>
  island(
    Effect.gen(function* () {
      const limit = yield* positiveLimit(o.limit)
      const state = yield* checkState(o.state)
      const offset = yield* checkAfter(o.after)
      const page = yield* listJobOrders(o.scope, { state, offset, limit })
      const rows = page.items.map((item) => ({ ...listedView(item), scope: o.scope }))
      const next = page.next === null ? null : String(page.next)
      yield* emit({ scope: o.scope, jobOrders: rows, next }, () => {
        const table = renderTable(
          [
            { header: "ID", value: (r: (typeof rows)[number]) => r.id },
            { header: "STATE", value: (r) => r.state ?? `(${r.problem})` },
            { header: "PRIORITY", value: (r) => r.listedPriority, align: "right" },
            { header: "VERSION", value: (r) => r.version, align: "right" },
            { header: "WORK MASTER", value: (r) => r.workMasterId }
          ],
          rows,
          state === undefined ? `(no job orders in scope ${o.scope})` : `(no job orders in state ${state} in scope ${o.scope})`
        )
        return next === null ? table : sections(table, `more: --after ${next}`)
      })
    })
  )
).pipe(Command.withDescription("job orders of a scope, highest priority first, a page at a time (--limit, --after)"))

/** Milliseconds until a retired job order expires, or null while it is live (no TTL). */
const retention = (id: string) => Effect.flatMap(JobOrderRetention, (r) => r.expiresIn(id)).pipe(Effect.map(Option.getOrNull))

const show = Command.make("show", { id: Argument.String("id") }, ({ id }) =>
  island(
    Effect.gen(function* () {
      const stored = yield* (yield* JobOrderDao).get(id)
      const v = view(stored)
      const expiresInMs = yield* retention(id)
      const history = yield* changeHistory(stored.scope, "joborder", id)
      const document = parseJson(stored.doc)
      yield* emit({ ...v, op: stored.op, retired: expiresInMs !== null, expiresInMs, document, history }, () =>
        sections(
          renderFields([
            ["id", v.id],
            ["scope", v.scope],
            ["state", v.state ?? `(malformed: ${v.problem})`],
            ["priority", v.priority],
            ["work master", v.workMasterId],
            ["version", v.version],
            ["last op", stored.op],
            ["retired", expiresInMs === null ? "no" : `yes, expires in ${humanDuration(expiresInMs)}`],
            ["comment", v.comment]
          ]),
          section("Document", prettyJson(document)),
          section("History", renderHistory(history))
        )
      )
    })
  )
).pipe(Command.withDescription("a job order: document, decoded state and change history"))

export const jobOrdersCommand = Command.make("joborders").pipe(
  Command.withDescription("job orders: list, search, show, and the operator's state actions (pause, resume, abort, clear, ...)"),
  Command.withSubcommands([list, searchCommand, show, ...jobOrderActionCommands])
)
