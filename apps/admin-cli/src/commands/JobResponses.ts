import { Argument, Command, Flag } from "effect/cli"
import { Effect, Option, Result } from "effect"
import { decodeJobResponseText } from "@microdcs/job-state"
import { JobResponseDao, type JobResponseDocument, type StatePage } from "@microdcs/store"
import { isoTime } from "../Format.js"
import { changeHistory, renderHistory } from "../History.js"
import { island } from "../Island.js"
import { parseJson, prettyJson } from "../Json.js"
import { emit } from "../Output.js"
import { renderFields, renderTable, section, sections } from "../Table.js"
import { positiveLimit } from "./JobOrders.js"

interface ResponseRow {
  readonly id: string
  readonly orderId: string
  readonly state: string
  readonly version: number
}

const row = (d: JobResponseDocument): ResponseRow => ({ id: d.id, orderId: d.orderId, state: d.state, version: d.version })

const columns = [
  { header: "ID", value: (r: ResponseRow) => r.id },
  { header: "JOB ORDER", value: (r: ResponseRow) => r.orderId },
  { header: "STATE", value: (r: ResponseRow) => r.state },
  { header: "VERSION", value: (r: ResponseRow) => r.version, align: "right" as const }
]

/** Ids of a state, SSCAN page by page until `limit` distinct ids (SSCAN may repeat an id). */
const idsInState = (scope: string, state: string, limit: number) =>
  Effect.gen(function* () {
    const responses = yield* JobResponseDao
    const ids = new Set<string>()
    let cursor: string | null = "0"
    while (cursor !== null && ids.size < limit) {
      const page: StatePage = yield* responses.byState(scope, state, cursor)
      for (const id of page.ids) ids.add(id)
      cursor = page.next
    }
    return [...ids].sort().slice(0, limit)
  })

/** Ids of the scope by start time, oldest first. */
const idsByStart = (scope: string, limit: number) =>
  Effect.gen(function* () {
    const page = yield* (yield* JobResponseDao).list(scope, { count: limit })
    return page.items.map((i) => i.id)
  })

const list = Command.make(
  "list",
  {
    scope: Flag.String("scope"),
    state: Flag.String("state").pipe(
      Flag.withDescription("only responses in this normalized state (the by-state index); without it, all by start time"),
      Flag.optional
    ),
    limit: Flag.Int("limit").pipe(Flag.withDefault(100))
  },
  (o) =>
    island(
      Effect.gen(function* () {
        const limit = yield* positiveLimit(o.limit)
        const ids = Option.isSome(o.state) ? yield* idsInState(o.scope, o.state.value, limit) : yield* idsByStart(o.scope, limit)
        const rows = (yield* (yield* JobResponseDao).getMany(ids)).map(row)
        yield* emit({ scope: o.scope, state: Option.getOrNull(o.state), jobResponses: rows }, () =>
          renderTable(columns, rows, `(no job responses in scope ${o.scope}${Option.isSome(o.state) ? ` in state ${o.state.value}` : ""})`)
        )
      })
    )
).pipe(Command.withDescription("job responses of a scope, by state or by start time"))

const startTimeOf = (document: unknown): string => {
  const start = (document as { readonly StartTime?: unknown } | null)?.StartTime
  return typeof start === "string" ? start : typeof start === "number" ? isoTime(start) : "-"
}

/**
 * The document as shown: in the current form (one the previous release stored is upgraded), or
 * as stored with every problem when it does not decode.
 */
const documentOf = (stored: JobResponseDocument) => {
  const decoded = decodeJobResponseText(stored.doc)
  return Result.isSuccess(decoded)
    ? { document: decoded.success as unknown, problems: null }
    : { document: parseJson(stored.doc), problems: decoded.failure.problems }
}

/** One response with its document and change entries. */
const showResponse = (stored: JobResponseDocument) =>
  Effect.gen(function* () {
    const history = yield* changeHistory(stored.scope, "jobresponse", stored.id)
    const { document, problems } = documentOf(stored)
    const value = { ...row(stored), scope: stored.scope, op: stored.op, document, problems, history }
    yield* emit(value, () =>
      sections(
        renderFields([
          ["id", stored.id],
          ["scope", stored.scope],
          ["job order", stored.orderId],
          ["state", stored.state === "" ? "(not indexed)" : stored.state],
          ["start time", startTimeOf(document)],
          ["version", stored.version],
          ["last op", stored.op]
        ]),
        ...(problems === null ? [] : [section("Problems (the document does not decode)", problems.join("\n"))]),
        section("Document", prettyJson(document)),
        section("History", renderHistory(history))
      )
    )
  })

const show = Command.make("show", { id: Argument.String("id") }, ({ id }) =>
  island(Effect.flatMap(JobResponseDao, (dao) => dao.get(id)).pipe(Effect.flatMap(showResponse)))
).pipe(Command.withDescription("a job response: document and change history"))

const byOrder = Command.make("by-order", { orderId: Argument.String("job-order-id") }, ({ orderId }) =>
  island(Effect.flatMap(JobResponseDao, (dao) => dao.byOrder(orderId)).pipe(Effect.flatMap(showResponse)))
).pipe(Command.withDescription("the job response of a job order"))

export const jobResponsesCommand = Command.make("jobresponses").pipe(
  Command.withDescription("job responses"),
  Command.withSubcommands([list, show, byOrder])
)
