import { Cause, Effect, Exit } from "effect"
import { BatchOutcome, type EntryFailure, type PollerEntry } from "@microdcs/poller"
import { CommandDispatch } from "./CommandDispatch.js"
import { followedChange, handleChangeEntry } from "./ChangeFollower.js"
import type { EngineOptions } from "./EngineOptions.js"
import { entryOperation } from "./EntryOperations.js"
import { handleWorkEntry } from "./OutboxHandler.js"
import { startJobs } from "./StartJobs.js"
import { decodeOutboxEntry } from "./OutboxCodec.js"
import type { CommandEntry } from "@microdcs/sfc"

/**
 * The engine's stream handlers per batch (one poller call per read): most entries need nothing
 * (a command this process already sent directly, a change the engine does not follow), and are
 * settled in plain synchronous code; the others run through the per-entry handlers, up to
 * `concurrency` at once, and only their failures are reported, so the rest is acknowledged with
 * one XACK.
 */
const runRest = <E, R>(rest: ReadonlyArray<PollerEntry>, handle: (entry: PollerEntry) => Effect.Effect<void, E, R>, concurrency: number) =>
  rest.length === 0
    ? Effect.succeed(BatchOutcome.allSucceeded)
    : // Each entry settles on its own, a defect too: a batch that failed as a whole would deliver
      // again the entries settled in plain code above (a command sent twice).
      Effect.forEach(rest, (entry) => Effect.exit(handle(entry)), { concurrency }).pipe(
        Effect.map((results) => {
          const failures: Array<EntryFailure> = []
          results.forEach((result, i) => {
            if (Exit.isFailure(result)) {
              const failure = Cause.findErrorOption(result.cause)
              failures.push({ id: rest[i]!.id, error: failure._tag === "Some" ? failure.value : Cause.pretty(result.cause) })
            }
          })
          return BatchOutcome.failed(failures)
        })
      )

/**
 * `sfc:work:{scope}` per batch: commands sent directly by this process are skipped without an
 * Effect each. Their entries count as acknowledged (CommandDispatch) only once the batch returns
 * its outcome: a batch cut at shutdown is not acknowledged, so those entries stay among the ones
 * the engine deletes when it stops, instead of pending for the next instance to send again.
 */
export const handleWorkBatch = (options: EngineOptions) => {
  const handle = handleWorkEntry(options)
  return (entries: ReadonlyArray<PollerEntry>) =>
    Effect.flatMap(CommandDispatch, (dispatch) => {
      const rest: Array<PollerEntry> = []
      const own: Array<readonly [string, CommandEntry]> = []
      const consumer = dispatch.current()?.consumer
      for (const entry of entries) {
        // A move or response this process carried out after its write (same operation id): done.
        const type = entry.fields["type"]
        if (type === "joborder" || type === "jobresponse") {
          const done = decodeOutboxEntry(entry.fields)
          const op = done?.type === "joborder" || done?.type === "jobresponse" ? entryOperation(done, entry.fields["version"] ?? "0") : undefined
          if (op !== undefined && dispatch.takeMoved(op)) continue
        }
        if (entry.fields["type"] === "command" && entry.fields["sender"] === consumer) {
          const command = decodeOutboxEntry(entry.fields)
          if (command?.type === "command") {
            own.push([entry.id, command])
            if (dispatch.takeHandled(command)) continue
          }
        }
        rest.push(entry)
      }
      const outcome = runRest(rest, handle, options.concurrency)
      return own.length === 0
        ? outcome
        : Effect.map(outcome, (result) => {
            const failed = new Set(result.failures.map((f) => f.id))
            for (const [id, command] of own) if (!failed.has(id)) dispatch.acknowledged(command)
            return result
          })
    })
}

/** The failures of a batch's starts, from their outcomes (one per entry, in order). */
const startFailures = (starts: ReadonlyArray<PollerEntry>, exits: ReadonlyArray<Exit.Exit<unknown, unknown>>): Array<EntryFailure> =>
  exits.flatMap((exit, i) => {
    if (Exit.isSuccess(exit)) return []
    const failure = Cause.findErrorOption(exit.cause)
    return [{ id: starts[i]!.id, error: failure._tag === "Some" ? failure.value : Cause.pretty(exit.cause) }]
  })

/**
 * The batch's starts together (`startJobs`: one read of their job orders, one of their work
 * masters, their creates in one call to the engine's loop); when a read of the batch fails, each
 * start runs on its own, so one job's failure is its entry's alone.
 */
const runStarts = <E, R>(starts: ReadonlyArray<PollerEntry>, handle: (entry: PollerEntry) => Effect.Effect<void, E, R>, options: EngineOptions) =>
  starts.length === 0
    ? Effect.succeed(BatchOutcome.allSucceeded)
    : startJobs(starts.map((entry) => followedChange(entry.fields)!.jobId), options).pipe(
        Effect.map((exits) => BatchOutcome.failed(startFailures(starts, exits))),
        Effect.catch(() => runRest(starts, handle, options.concurrency))
      )

/** `changes:{scope}` per batch: entries the engine does not follow are acknowledged as they are. */
export const handleChangeBatch = (options: EngineOptions) => {
  const handle = handleChangeEntry(options)
  return (entries: ReadonlyArray<PollerEntry>) => {
    const followed = entries.filter((entry) => followedChange(entry.fields) !== undefined)
    const starts = followed.filter((entry) => followedChange(entry.fields)!.action === "start")
    const rest = followed.filter((entry) => followedChange(entry.fields)!.action !== "start")
    return Effect.map(
      Effect.all([runStarts(starts, handle, options), runRest(rest, handle, options.concurrency)], { concurrency: "unbounded" }),
      ([started, others]) => BatchOutcome.failed([...started.failures, ...others.failures])
    )
  }
}
