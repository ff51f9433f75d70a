import { Config, Data, Effect, Layer, Option, Redacted } from "effect"
import { executionLookupLayer, logStorageLayer, storageDatabase, type TreeRow, withoutLogStorage } from "@microdcs/execution-log"
import { ExecutionLogStore } from "@microdcs/store"
import { Conflict, Missing } from "./ExitCode.js"
import { humanDuration, isoTime } from "./Format.js"
import { renderTable } from "./Table.js"

/**
 * The execution log for the CLI: Valkey first, then the storage database
 * at `PG_URL` for what retention removed. Without `PG_URL` the tree comes from Valkey alone (an
 * embedded PGlite lives inside its daemon, out of reach), and a miss says so.
 */
export const withExecutionLog = <A, E, R>(body: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const url = yield* Config.option(Config.String("PG_URL"))
    const storage = Option.match(url, {
      onNone: () => withoutLogStorage,
      onSome: (u) => logStorageLayer.pipe(Layer.provideMerge(storageDatabase(Redacted.make(u))))
    })
    const layer = executionLookupLayer.pipe(Layer.provideMerge(storage), Layer.provide(ExecutionLogStore.Default))
    return yield* Effect.provide(body, layer).pipe(Effect.mapError(exitError))
  })

/** The storage database at `PG_URL` could not be reached or did not answer (exit 4, like Valkey). */
export class StorageUnavailable extends Data.TaggedError("StorageUnavailable")<{ readonly message: string }> {}

/** The log's failures as the CLI's exit codes: nothing logged is "not found", a bad value a conflict, no database "unavailable". */
const exitError = <E>(e: E): E | Missing | Conflict | StorageUnavailable => {
  const tagged = e as { readonly _tag?: unknown; readonly message?: unknown }
  switch (tagged._tag) {
    case "NoExecutionLog":
      return new Missing({ message: String(tagged.message) })
    case "LogRecordInvalid":
      return new Conflict({ message: `the execution log holds a value that does not decode: ${String(tagged.message)}` })
    case "SqlError":
      return new StorageUnavailable({ message: `the execution log storage at PG_URL is unavailable: ${String(tagged.message)}` })
    default:
      return e
  }
}

const label = (row: TreeRow): string => {
  const indent = "  ".repeat(row.depth)
  switch (row.type) {
    case "execution":
      return `${indent}execution ${row.executionId}`
    case "missing":
      return `${indent}execution ${row.executionId} (not in the log)`
    case "node":
      return `${indent}${row.record.seq} ${row.record.kind} ${row.record.name}`
  }
}

const status = (row: TreeRow): string | undefined => {
  if (row.type === "missing") return "missing"
  if (row.type === "execution") return row.record.status
  return row.record.closedAt === undefined ? "open" : "closed"
}

const took = (row: TreeRow, now: number): string | undefined => {
  if (row.type === "missing") return undefined
  const end = row.record.closedAt ?? now
  return humanDuration(Math.max(0, end - row.record.openedAt))
}

const extra = (row: TreeRow): string | undefined => {
  if (row.type === "execution") return `${row.record.workMasterId} recipe ${row.record.recipeDigest.slice(0, 12)}`
  if (row.type === "node" && row.record.detail !== undefined) {
    const text = JSON.stringify(row.record.detail) ?? ""
    return text.length > 60 ? `${text.slice(0, 59)}…` : text
  }
  return undefined
}

/** The tree as an indented table: the first column's indentation is the row's depth. */
export const renderTree = (rows: ReadonlyArray<TreeRow>, now: number): string =>
  renderTable(
    [
      { header: "EXECUTION / NODE", value: label },
      { header: "STATUS", value: status },
      { header: "OPENED", value: (r: TreeRow) => (r.type === "missing" ? undefined : isoTime(r.record.openedAt)) },
      { header: "TOOK", value: (r) => took(r, now) },
      { header: "DETAIL", value: extra }
    ],
    rows
  )
