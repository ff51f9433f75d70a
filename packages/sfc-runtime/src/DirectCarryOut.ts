import { Effect } from "effect"
import type { JobOrderEntry, JobResponseEntry } from "@microdcs/sfc"
import type { DirectSendDeps, HandlerServices } from "./DirectSendDeps.js"
import { entryOperation } from "./EntryOperations.js"
import { moveJobOrder, storeResponse } from "./OutboxHandler.js"

/**
 * The job order moves and the response of a write, carried out here at once instead of after
 * the work poller read their entries: the outbox handler's own code, so an entry marked done
 * is one the handler would have found done. Interrupted when the engine stops (the entries
 * are then the next instance's); a failure is logged and left to the entry.
 */

/**
 * A write made here does not nudge the work consumers (its entries need no handler if all goes
 * well); one whose send or move did not go well does, so the handler takes its entry at once
 * instead of at the next fallback poll. A lost nudge still leaves the poll.
 */
export const nudgeHandlers = (deps: DirectSendDeps, scope: string) => Effect.ignore(deps.nudges.nudge("sfc", scope))

const carryOne = (
  deps: DirectSendDeps,
  entry: JobOrderEntry | JobResponseEntry,
  version: number,
  scope: string
): Effect.Effect<void, never, HandlerServices> => {
  const { dispatch } = deps
  const op = entryOperation(entry, String(version))
  // A Run the first command's send already applied (see `send`).
  if (dispatch.hasMoved(op)) return Effect.void
  const run: Effect.Effect<void, unknown, HandlerServices> =
    entry.type === "joborder" ? moveJobOrder(entry, String(version)) : storeResponse(entry, scope)
  return Effect.matchCauseEffect(run, {
    onSuccess: () => Effect.sync(() => dispatch.moved(op)),
    onFailure: (cause) =>
      Effect.logDebug("carrying out an outbox entry directly failed; the entry takes over", cause).pipe(
        Effect.annotateLogs({ jobId: entry.jobId, type: entry.type }),
        Effect.andThen(nudgeHandlers(deps, scope))
      )
  })
}

/** Carries out a write's entries in outbox order (Complete after the Run of the same write), in a fiber of `runCarry`. */
export const carryOut = (
  deps: DirectSendDeps,
  runCarry: (effect: Effect.Effect<void>) => unknown,
  entries: ReadonlyArray<JobOrderEntry | JobResponseEntry>,
  version: number,
  scope: string
): void => {
  if (deps.closed || deps.gaveUp || entries.length === 0) return
  // The services once per write.
  runCarry(Effect.provide(Effect.forEach(entries, (entry) => carryOne(deps, entry, version, scope), { discard: true }), deps.context))
}
