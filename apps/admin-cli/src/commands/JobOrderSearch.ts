import { Command, Flag } from "effect/cli"
import { Effect, Option } from "effect"
import { JobOrderSearch, type JobOrderSearchFilter, type JobOrderSearchItem, searchFilterProblems, searchOptionsProblems, searchTimeOf } from "@microdcs/store"
import { UsageError } from "../ExitCode.js"
import { island } from "../Island.js"
import { emit } from "../Output.js"
import { renderTable, sections } from "../Table.js"

const text = (name: string, description: string) => Flag.String(name).pipe(Flag.withDescription(description), Flag.optional)

const flags = {
  scope: text("scope", "only these scopes (comma-separated); default every scope"),
  allScopes: Flag.Boolean("all-scopes").pipe(Flag.withDescription("every scope (the default without --scope)"), Flag.withDefault(false)),
  idPrefix: text("id-prefix", "job order ids starting with this"),
  state: text("state", "normalized state names, comma-separated (Running,Aborted)"),
  workMaster: text("work-master", "the first work master the job order references"),
  createdFrom: text("created-from", "created at or after (ISO 8601 or epoch ms)"),
  createdTo: text("created-to", "created at or before (ISO 8601 or epoch ms)"),
  endedFrom: text("ended-from", "ended or aborted at or after (ISO 8601 or epoch ms)"),
  endedTo: text("ended-to", "ended or aborted at or before (ISO 8601 or epoch ms)"),
  priorityMin: text("priority-min", "priority at least"),
  priorityMax: text("priority-max", "priority at most"),
  error: text("error", "text in the reason of an Aborted job order (any case)"),
  limit: Flag.Int("limit").pipe(Flag.withDescription("rows per page (1 to 1000)"), Flag.withDefault(50)),
  after: Flag.String("after").pipe(Flag.withMetavar("CURSOR"), Flag.withDescription("the next page: the cursor a previous page printed"), Flag.optional),
  count: Flag.Boolean("count").pipe(Flag.withDescription("only the total, checked job order by job order (exact up to 200,000)"), Flag.withDefault(false))
}

type Options = { readonly [K in keyof typeof flags]: (typeof flags)[K] extends Flag.Flag<infer A> ? A : never }

const listOf = (o: Option.Option<string>) =>
  Option.match(o, { onNone: () => undefined, onSome: (t) => t.split(",").map((s) => s.trim()).filter((s) => s !== "") })

/** The filter the flags ask for, or every problem with them. */
const filterOf = (o: Options): { readonly filter: JobOrderSearchFilter; readonly problems: ReadonlyArray<string> } => {
  const problems: Array<string> = []
  const time = (name: string, value: Option.Option<string>) => {
    if (Option.isNone(value)) return undefined
    const ms = searchTimeOf(`--${name}`, value.value)
    if (typeof ms === "string") problems.push(ms)
    return typeof ms === "number" ? ms : undefined
  }
  const number = (name: string, value: Option.Option<string>) => {
    if (Option.isNone(value)) return undefined
    const n = Number(value.value)
    if (!Number.isFinite(n) || value.value.trim() === "") problems.push(`--${name} must be a number, got '${value.value}'`)
    return Number.isFinite(n) ? n : undefined
  }
  if (o.allScopes && Option.isSome(o.scope)) problems.push("--all-scopes and --scope exclude each other")
  const filter: JobOrderSearchFilter = {
    scopes: listOf(o.scope),
    idPrefix: Option.getOrUndefined(o.idPrefix),
    states: listOf(o.state),
    workMaster: Option.getOrUndefined(o.workMaster),
    createdFrom: time("created-from", o.createdFrom),
    createdTo: time("created-to", o.createdTo),
    endedFrom: time("ended-from", o.endedFrom),
    endedTo: time("ended-to", o.endedTo),
    priorityMin: number("priority-min", o.priorityMin),
    priorityMax: number("priority-max", o.priorityMax),
    errorText: Option.getOrUndefined(o.error)
  }
  return { filter, problems: [...problems, ...searchFilterProblems(filter), ...searchOptionsProblems({ limit: o.limit })] }
}

const time = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())

const table = (items: ReadonlyArray<JobOrderSearchItem>) =>
  renderTable(
    [
      { header: "SCOPE", value: (r: JobOrderSearchItem) => r.scope },
      { header: "ID", value: (r) => r.id },
      { header: "STATE", value: (r) => r.state },
      { header: "PRIORITY", value: (r) => r.priority, align: "right" },
      { header: "WORK MASTER", value: (r) => r.workMaster },
      { header: "CREATED", value: (r) => time(r.createdMs) },
      { header: "ENDED", value: (r) => time(r.endedMs) },
      { header: "ERROR", value: (r) => r.error ?? null }
    ],
    items,
    "(no job orders match)"
  )

const totalLine = (total: number, exact: boolean) => `total: ${exact ? total : `at most ${total}`}`

const run = (o: Options) =>
  Effect.gen(function* () {
    const { filter, problems } = filterOf(o)
    if (problems.length > 0) return yield* Effect.fail(new UsageError({ message: problems.join("\n") }))
    const search = yield* JobOrderSearch
    if (o.count) {
      const count = yield* search.count(filter)
      return yield* emit(count, () => totalLine(count.total, count.totalExact))
    }
    const page = yield* search.search(filter, { limit: o.limit, after: Option.getOrUndefined(o.after) })
    yield* emit({ jobOrders: page.items, total: page.total, totalExact: page.totalExact, next: page.next }, () =>
      sections(table(page.items), [totalLine(page.total, page.totalExact), ...(page.next === null ? [] : [`more: --after ${page.next}`])].join("\n"))
    )
  })

export const searchCommand = Command.make("search", flags, (o) => island(run(o))).pipe(
  Command.withDescription(
    "job orders matching filters across scopes (id prefix, state, work master, created/ended time, priority, error text), from the search index, with a total and a cursor (--after)"
  )
)
