import { type Deferred, Effect, Result } from "effect"
import type { ConnectionError, SfcCasManyError, SfcCompareAndSetMany, SfcWritten } from "@microdcs/store"
import type { CommandEntry, EngineOutput, JobOrderEntry, JobResponseEntry } from "@microdcs/sfc"
import type { DirectSender, DirectSendOutcome } from "./CommandDispatch.js"
import { type ExecutionDeps, remember } from "./ExecutionStates.js"
import { encodeOutboxEntry } from "./OutboxCodec.js"
import { type CarriedAlong, carriedAlong, jobOrderSeen, settleCarried } from "./WriteCarriedAlong.js"
import type { AppliedEvent } from "./ApplyInbox.js"

/**
 * The sends of a write's commands from outbox entry `at` on, one after the other (`nth`: the
 * command's place among the write's commands); after the last, the moves and the response,
 * not waited for (Run lands with the first command). Positional arguments, no record: this runs
 * once per command.
 */
const sendFrom = (
  deps: ExecutionDeps,
  sender: DirectSender,
  output: EngineOutput,
  written: SfcWritten,
  pending: ReadonlyArray<Deferred.Deferred<DirectSendOutcome>>,
  at: number,
  nth: number
): Effect.Effect<void> => {
  const outbox = output.outbox
  while (at < outbox.length && outbox[at]!.type !== "command") at++
  if (at === outbox.length) {
    sender.carryOut(outbox.filter((entry): entry is JobOrderEntry | JobResponseEntry => entry.type !== "command"), written.version, output.state.scope)
    return Effect.void
  }
  const entry = outbox[at] as CommandEntry
  return Effect.flatMap(sender.handle(entry, output.state, written.entryIds?.[at], written.jobOrder), (outcome) => {
    deps.dispatch.settle(entry, pending[nth]!, outcome)
    return sendFrom(deps, sender, output, written, pending, at + 1, nth + 1)
  })
}

/** One job's write in a tick: the output of its inputs, the version it was computed from, the events it applies. */
export interface PlannedWrite {
  readonly expectedVersion: number
  readonly output: EngineOutput
  readonly appliedEvents: ReadonlyArray<AppliedEvent>
}

/**
 * The job order version this process holds a copy of, so the CAS's read after the write need
 * not carry the document back. None with a move: a move that does not land may meet the job
 * order at the version it would have made, in another state (one that lands is known: the CAS
 * leaves its document out by itself, and `settleCarried` holds it before the sends).
 */
const heldVersion = (deps: ExecutionDeps, write: PlannedWrite, along: CarriedAlong) =>
  along.move === undefined ? deps.jobOrders?.heldVersion(write.output.state.jobId) : undefined

/** The CAS input of one planned write, with the direct send's part when this instance sends its commands itself. */
const casInput = (deps: ExecutionDeps, write: PlannedWrite, sender: DirectSender | undefined, commands: ReadonlyArray<CommandEntry>, along: CarriedAlong): SfcCompareAndSetMany => {
  const { output, expectedVersion } = write
  return {
    ...(along.move !== undefined ? { jobOrderMove: along.move.input } : {}),
    ...(along.response !== undefined ? { jobResponse: along.response.input } : {}),
    jobId: output.state.jobId,
    scope: output.state.scope,
    expectedVersion,
    doc: deps.snapshots.encodeState(output.state),
    entries: output.outbox.map((entry) =>
      encodeOutboxEntry(entry, expectedVersion + 1, sender && entry.type === "command" ? sender.consumer : undefined)
    ),
    due: output.due,
    active: output.active,
    waitsAdd: output.waitsAdd,
    waitsMove: output.waitsMove,
    waitsRemove: output.waitsRemove,
    keyedWaitsAdd: output.keyedWaitsAdd,
    keyedWaitsMove: output.keyedWaitsMove,
    keyedWaitsRemove: output.keyedWaitsRemove,
    appliedEvents: write.appliedEvents,
    // This instance carries out every entry itself (sends, moves, the response): no nudge
    // for entries that need no handler now; the fallback poll reads them (and handles any
    // that did not land from here).
    nudge: sender === undefined,
    // The CAS sets the pointers and reads the job order for the send: no round trip more.
    directSend:
      sender && commands.length > 0
        ? { correlationIds: commands.map((c) => c.correlationId), pointerTtlMs: sender.correlationTtlMs, readJobOrder: true, heldJobOrderVersion: heldVersion(deps, write, along) }
        : undefined
  }
}

/** What a write's CAS wrote; a create's also says which job order version its script found (see `jobOrderSeen`). */
export type WrittenJob = SfcWritten & { readonly jobOrderSeen?: number | undefined }

type WriteResults = ReadonlyArray<Result.Result<WrittenJob, SfcCasManyError>>

/** The results with each create's `jobOrderSeen` (a start checks that the job order did not change under it). */
const withSeen = (writes: ReadonlyArray<PlannedWrite>, along: ReadonlyArray<CarriedAlong>, results: WriteResults): WriteResults =>
  writes.some((write) => write.expectedVersion === 0)
    ? results.map((result, i) =>
        writes[i]!.expectedVersion === 0 && Result.isSuccess(result) ? Result.succeed({ ...result.success, jobOrderSeen: jobOrderSeen(along[i]!, result.success) }) : result
      )
    : results

/** After the CAS: the written states remembered, their log queued, their commands sent (each job's in order, jobs side by side). */
const afterCas = (deps: ExecutionDeps, writes: ReadonlyArray<PlannedWrite>, sender: DirectSender | undefined, pending: ReadonlyArray<ReadonlyArray<Deferred.Deferred<DirectSendOutcome>>>, results: WriteResults) => {
  const sends: Array<Effect.Effect<void>> = []
  results.forEach((result, i) => {
    if (Result.isFailure(result)) return
    const { output } = writes[i]!
    remember(deps, output.state.jobId, { state: output.state, version: result.success.version })
    // The log after the CAS, never waited for (queued from plain code; dropped and counted when full).
    deps.executionLog.offer(output.state.scope, output.log)
    if (sender) sends.push(sendFrom(deps, sender, output, result.success, pending[i]!, 0, 0))
  })
  // Not interruptible: a send once started is waited for and its outcome recorded, so a
  // writer stopped meanwhile never counts as unsent a command the station may have (sent
  // again then by the outbox handler or the restarted instance). Each wait is bounded: by
  // the send's timeout, and by the shutdown grace once the engine stops (see DirectSend).
  if (sends.length === 0) return Effect.succeed(results)
  const all = sends.length === 1 ? sends[0]! : Effect.all(sends, { concurrency: "unbounded", discard: true })
  return Effect.as(Effect.uninterruptible(all), results)
}

/**
 * The CAS of a tick's jobs in one script call (`landed` hears which jobs were written, before
 * their sends); each job's commands then go to the station at once, from here (the outbox entries stay the recovery path, see CommandDispatch). A job's
 * conflict or refusal is its own result and touches no other job.
 */
export const writeMany = (
  deps: ExecutionDeps,
  writes: ReadonlyArray<PlannedWrite>,
  landed: (jobIds: ReadonlyArray<string>) => void = () => {}
): Effect.Effect<WriteResults, ConnectionError> => {
  const { dispatch } = deps
  const sender = dispatch.current()
  const commands = writes.map((write) => (sender ? write.output.outbox.filter((entry): entry is CommandEntry => entry.type === "command") : []))
  const along = writes.map((write) => carriedAlong(deps, write.output, write.expectedVersion))
  const run = (pending: ReadonlyArray<ReadonlyArray<Deferred.Deferred<DirectSendOutcome>>>) =>
    Effect.flatMap(deps.states.compareAndSetMany(writes.map((write, i) => casInput(deps, write, sender, commands[i]!, along[i]!))), (written) => {
      const results = withSeen(writes, along, written)
      results.forEach((result, i) => settleCarried(deps, along[i]!, result))
      landed(writes.flatMap((write, i) => (Result.isSuccess(results[i]!) ? [write.output.state.jobId] : [])))
      return afterCas(deps, writes, sender, pending, results)
    })
  // Whatever ends the write (a lost CAS, an error, an interruption), no handler of this
  // process may wait for a send that will not come: what is unsettled counts as not sent.
  if (commands.every((list) => list.length === 0)) return run(commands.map(() => []))
  return Effect.acquireUseRelease(Effect.sync(() => commands.map((list) => (list.length > 0 ? dispatch.begin(list) : []))), run, (pending) =>
    Effect.sync(() => commands.forEach((list, i) => list.forEach((command, j) => dispatch.settle(command, pending[i]![j]!, false))))
  )
}
