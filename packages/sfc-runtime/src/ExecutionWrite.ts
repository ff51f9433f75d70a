import { type Deferred, Effect } from "effect"
import type { SfcWritten } from "@microdcs/store"
import type { CommandEntry, EngineOutput, JobOrderEntry, JobResponseEntry } from "@microdcs/sfc"
import type { DirectSender, DirectSendOutcome } from "./CommandDispatch.js"
import { type ExecutionDeps, remember } from "./ExecutionStates.js"
import { encodeOutboxEntry } from "./OutboxCodec.js"

/** An event recorded in the same write, so a redelivered event is a no-op. */
type AppliedEvent = { readonly source: string; readonly id: string }

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
  return Effect.flatMap(sender.handle(entry, output.state, written.entryIds?.[at], written.jobOrderDoc), (outcome) => {
    deps.dispatch.settle(entry, pending[nth]!, outcome)
    return sendFrom(deps, sender, output, written, pending, at + 1, nth + 1)
  })
}

/** The CAS of one output, with the direct send's part when this instance sends its commands itself. */
const compareAndSet = (
  deps: ExecutionDeps,
  expectedVersion: number,
  output: EngineOutput,
  appliedEvent: AppliedEvent | undefined,
  sender: DirectSender | undefined,
  commands: ReadonlyArray<CommandEntry>
) =>
  deps.states.compareAndSet({
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
    appliedEvent,
    // This instance carries out every entry itself (sends, moves, the response): no nudge
    // for entries that need no handler now; the fallback poll reads them (and handles any
    // that did not land from here).
    nudge: sender === undefined,
    // The CAS sets the pointers and reads the job order for the send: no round trip more.
    directSend:
      sender && commands.length > 0
        ? { correlationIds: commands.map((c) => c.correlationId), pointerTtlMs: sender.correlationTtlMs, readJobOrder: true }
        : undefined
  })

/**
 * One CAS; on success the commands it emitted go to the station at once, from here (the
 * outbox entries stay the recovery path, see CommandDispatch). Written in plain combinators:
 * this runs once per step.
 */
export const write = (deps: ExecutionDeps, expectedVersion: number, output: EngineOutput, appliedEvent?: AppliedEvent) => {
  const { dispatch } = deps
  const sender = dispatch.current()
  const commands = sender ? output.outbox.filter((entry): entry is CommandEntry => entry.type === "command") : []
  const run = (pending: ReadonlyArray<Deferred.Deferred<DirectSendOutcome>>) =>
    Effect.flatMap(compareAndSet(deps, expectedVersion, output, appliedEvent, sender, commands), (written) => {
      remember(deps, output.state.jobId, { state: output.state, version: written.version })
      // The log after the CAS, never waited for (queued from plain code; dropped and counted when full).
      deps.executionLog.offer(output.state.scope, output.log)
      if (!sender) return Effect.succeed(written)
      // Not interruptible: a send once started is waited for and its outcome recorded, so a
      // writer stopped meanwhile never counts as unsent a command the station may have (sent
      // again then by the outbox handler or the restarted instance). Each wait is bounded: by
      // the send's timeout, and by the shutdown grace once the engine stops (see DirectSend).
      return Effect.as(Effect.uninterruptible(sendFrom(deps, sender, output, written, pending, 0, 0)), written)
    })
  // Whatever ends the write (a lost CAS, an error, an interruption), no handler of this
  // process may wait for a send that will not come: what is unsettled counts as not sent.
  if (commands.length === 0) return run([])
  return Effect.acquireUseRelease(Effect.sync(() => dispatch.begin(commands)), run, (pending) =>
    Effect.sync(() => commands.forEach((command, i) => dispatch.settle(command, pending[i]!, false)))
  )
}
