import { Duration, Effect, Option, Schedule } from "effect"
import { ExecutionLookup, executionTree, type TreeRow } from "@microdcs/execution-log"
import { ExecutionLogStore } from "@microdcs/store"

/** One tree row as a line of text, indented by its depth. */
export const treeLine = (row: TreeRow): string => {
  const indent = "  ".repeat(row.depth)
  if (row.type === "missing") return `${indent}execution ${row.executionId} (not in the log)`
  if (row.type === "execution") return `${indent}execution ${row.executionId}  ${row.record.status}  recipe ${row.record.recipeDigest.slice(0, 12)}`
  const took = row.record.closedAt === undefined ? "open" : `${Math.max(0, row.record.closedAt - row.record.openedAt)} ms`
  return `${indent}${row.record.seq} ${row.record.kind} ${row.record.name}  ${took}`
}

/**
 * The tree of an execution as storage holds it: the same walk with Valkey's copy left out, so
 * every row comes from PostgreSQL (what an operator sees once retention removed it from Valkey).
 */
const storedTree = (executionId: string) =>
  Effect.gen(function* () {
    const store = yield* ExecutionLogStore
    const storageOnly = ExecutionLogStore.of({ ...store, readExec: () => Effect.succeedNone })
    return yield* executionTree(executionId).pipe(Effect.provideService(ExecutionLogStore, storageOnly))
  })

/**
 * The demo's last lines: the execution log of one finished job, read back from storage once the
 * storage role has committed it (it commits when the execution closes). Without a log for the
 * job (an engine that writes none) it says so instead of waiting.
 */
export const printStoredTree = (jobId: string) =>
  Effect.gen(function* () {
    const lookup = yield* ExecutionLookup
    // The database may still be starting (in the background) when a short batch is done already.
    const executions = yield* lookup.executionsOfJob(jobId).pipe(
      Effect.retry({ schedule: Schedule.spaced(Duration.millis(200)), times: 75, while: (e) => e._tag === "SqlError" })
    )
    const last = executions.at(-1)
    if (last === undefined) {
      console.log(`  execution log         no execution log for ${jobId}`)
      return
    }
    const inValkey = yield* lookup.tree(last.executionId)
    const committed = (rows: ReadonlyArray<TreeRow>) => rows.length === inValkey.rows.length && rows.every((r) => r.type !== "missing" && (r.type !== "execution" || r.record.status !== "running"))
    // Polled, not waited on blindly: the storage role commits within moments of the close.
    let stored = Option.none<ReadonlyArray<TreeRow>>()
    for (let tries = 0; tries < 75 && !(Option.isSome(stored) && committed(stored.value)); tries++) {
      if (tries > 0) yield* Effect.sleep(Duration.millis(200))
      stored = yield* Effect.option(storedTree(last.executionId))
    }
    if (Option.isNone(stored) || !committed(stored.value)) {
      console.log(`  execution log         ${jobId}: not committed to storage within 15 s; from Valkey:`)
      for (const row of inValkey.rows) console.log(`    ${treeLine(row)}`)
      return
    }
    console.log(`  execution log         ${jobId}, read back from storage (${stored.value.length} rows):`)
    for (const row of stored.value) console.log(`    ${treeLine(row)}`)
  })
