import { Deferred, Effect, Exit, Fiber, FiberSet, Schedule } from "effect"
import { Nudges, SfcCorrelations, type SfcJobOrderRead, Valkey, ValkeyStreams } from "@microdcs/store"
import type { CommandEntry, ExecutionState } from "@microdcs/sfc"
import { CommandDispatch, type DirectSendOutcome } from "./CommandDispatch.js"
import { carryOut, nudgeHandlers } from "./DirectCarryOut.js"
import type { DirectSendDeps, HandlerServices, Waiting } from "./DirectSendDeps.js"
import { notSent, send } from "./DirectSendGate.js"
import type { EngineOptions } from "./EngineOptions.js"
import { JobOrderTransitions } from "./JobOrderTransitions.js"
import { StationPort } from "./StationPort.js"

/** How long a direct send may take before its outbox entry takes over (checked every WATCHDOG_INTERVAL). */
const DIRECT_SEND_TIMEOUT_MS = 5_000
const WATCHDOG_INTERVAL = "1 second"

/** How long the engine's stop waits for direct sends under way (a write may send a few commands). */
const UNDERWAY_WAIT = "15 seconds"

/**
 * Another instance may hold the entry pending and wait for this one: settle it for the group.
 * Acknowledgements gather for one turn of the event loop and go out as one XACK per stream.
 */
const flushAcks = (deps: DirectSendDeps) => {
  const batches = [...deps.toAck]
  deps.toAck.clear()
  return Effect.forEach(batches, ([scope, ids]) =>
    deps.valkey.key("sfcWork", { scope }).pipe(Effect.flatMap((stream) => deps.streams.ack(stream, deps.options.workGroup, ids)), Effect.ignore)
  )
}

const acknowledge = (deps: DirectSendDeps, scope: string, entryId: string) =>
  Effect.suspend(() => {
    const { toAck } = deps
    const first = toAck.size === 0
    const ids = toAck.get(scope) ?? []
    ids.push(entryId)
    toAck.set(scope, ids)
    return first ? Effect.forkDetach(Effect.sleep(0).pipe(Effect.andThen(deps.flushAcks))) : Effect.void
  })

/** One direct send with its outcome: `true` when carried out (the entry then needs nothing more). */
const attempt = (deps: DirectSendDeps, command: CommandEntry, state: ExecutionState, entryId: string | undefined, jobOrder: SfcJobOrderRead | null | undefined) =>
  Effect.matchCauseEffect(Effect.interruptible(Effect.suspend(() => send(deps, command, state, jobOrder))), {
    onSuccess: (sent) => {
      if (!sent || entryId === undefined) return Effect.succeed(sent)
      deps.dispatch.locate(command, state.scope, entryId)
      return Effect.as(acknowledge(deps, state.scope, entryId), true)
    },
    onFailure: (cause) =>
      Effect.logInfo("direct send failed; the outbox entry takes over", cause).pipe(
        Effect.annotateLogs({ jobId: command.jobId, action: command.action }),
        Effect.as(false)
      )
  })

// A station link that hangs must not hold the write's caller (an ingest, a batch): past
// DIRECT_SEND_TIMEOUT_MS a send is interrupted and the outbox entry takes over, as after a
// crash. One watchdog for every send, not a timer race per send (the hot path).
const watchdog = ({ underway }: DirectSendDeps) =>
  Effect.suspend(() => {
    const now = Date.now()
    const late = [...underway.values()].filter((send) => send.deadline <= now)
    return Effect.forEach(late, ({ fiber, ...send }) =>
      Effect.logInfo("direct send took too long; the outbox entry takes over").pipe(
        Effect.annotateLogs({ jobId: send.command.jobId, action: send.command.action }),
        Effect.andThen(Effect.forkChild(Fiber.interrupt(fiber)))
      ), { discard: true })
  })

/** Every write still waiting gets the outcome "unknown": its entry is the next instance's to send. */
const giveUp = (deps: DirectSendDeps) =>
  Effect.sync(() => {
    deps.gaveUp = true
    for (const write of deps.waiting) {
      write.answered = true
      Deferred.doneUnsafe(write.outcome, Exit.succeed("unknown"))
    }
  })

/**
 * The send's end, however it ends (interrupted by the watchdog: not sent as far as this
 * process knows). A write that stopped waiting meanwhile: a later delivery of the entry
 * finds what happened.
 */
const sendEnded = (deps: DirectSendDeps, write: Waiting, command: CommandEntry, scope: string, exit: Exit.Exit<boolean>) => {
  deps.underway.delete(write.outcome)
  const sent = Exit.isSuccess(exit) && exit.value
  if (write.answered) deps.dispatch.resolveUnknown(command, sent)
  else {
    write.answered = true
    Deferred.doneUnsafe(write.outcome, Exit.succeed(sent))
  }
  return sent ? Effect.void : nudgeHandlers(deps, scope)
}

/** The sender's `handle`: the send in a fiber of its own, the write waiting for its outcome. */
const handOver = (deps: DirectSendDeps, command: CommandEntry, state: ExecutionState, entryId: string | undefined, jobOrder: SfcJobOrderRead | null | undefined) =>
  Effect.suspend(() => {
    // Stopping: the outbox entry is the way (this process's handler, or the next instance).
    if (deps.closed || deps.gaveUp) return notSent
    const write: Waiting = { outcome: Deferred.makeUnsafe<DirectSendOutcome>(), answered: false }
    deps.waiting.add(write)
    // The watchdog bounds the send itself, also once the write stopped waiting.
    let finished = false
    const finish = (exit: Exit.Exit<boolean>) =>
      Effect.suspend(() => {
        finished = true
        return sendEnded(deps, write, command, state.scope, exit)
      })
    return Effect.forkDetach(Effect.onExit(attempt(deps, command, state, entryId, jobOrder), finish)).pipe(
      Effect.flatMap((fiber) => {
        if (!finished) deps.underway.set(write.outcome, { fiber, deadline: Date.now() + DIRECT_SEND_TIMEOUT_MS, command })
        return Deferred.await(write.outcome)
      }),
      Effect.ensuring(Effect.sync(() => deps.waiting.delete(write)))
    )
  })

// At shutdown (after the pollers stopped), no send starts any more and those under way end
// (or are given up on after the grace); then the entries of commands sent here that the work
// poller has not acknowledged are deleted: restarted, this instance would not remember
// sending them and would send them again.
const deleteUnseen = (deps: DirectSendDeps) =>
  Effect.suspend(() => {
    const byScope = new Map<string, Array<string>>()
    for (const { scope, entryId } of deps.dispatch.unseenEntries()) byScope.set(scope, [...(byScope.get(scope) ?? []), entryId])
    return Effect.forEach(byScope, ([scope, ids]) =>
      deps.valkey.key("sfcWork", { scope }).pipe(Effect.flatMap((stream) => deps.streams.ackAndDelete(stream, deps.options.workGroup, ids)), Effect.ignore)
    )
  })

const closeDirectSend = (deps: DirectSendDeps) =>
  Effect.suspend(() => {
    deps.closed = true
    return deps.dispatch.awaitUnderway(UNDERWAY_WAIT)
  }).pipe(
    Effect.andThen(Effect.suspend(() => (deps.graceTimer ? Fiber.interrupt(deps.graceTimer) : Effect.void))),
    Effect.andThen(deleteUnseen(deps))
  )

const directSendDepsOf = (options: EngineOptions) =>
  Effect.gen(function* () {
    const deps: DirectSendDeps = {
      options,
      dispatch: yield* CommandDispatch,
      jobOrders: yield* JobOrderTransitions,
      correlations: yield* SfcCorrelations,
      station: yield* StationPort,
      streams: yield* ValkeyStreams,
      valkey: yield* Valkey,
      context: yield* Effect.context<HandlerServices>(),
      nudges: yield* Effect.provide(Nudges, Nudges.Default),
      toAck: new Map(),
      flushAcks: Effect.suspend(() => flushAcks(deps)),
      underway: new Map(),
      waiting: new Set(),
      gaveUp: false,
      closed: false,
      graceTimer: undefined
    }
    return deps
  })

/**
 * Installs this instance's direct sender (see CommandDispatch) for the life of the current
 * scope: after a CAS, a command whose job order allows it goes to the station at once. The
 * gate is the outbox handler's own, on the job order as the CAS script read it right after the
 * write (the same script set the correlation pointers) and on the state just written. A paused or pausing job takes
 * the handler's full path (held back until Resume). Whatever fails here is left to the outbox
 * entry, which another instance, or this one, then handles as the recovery path.
 *
 * A send, once started, ends on its own: it runs in a fiber of its own, bounded by
 * DIRECT_SEND_TIMEOUT only, and the write waits for it without being interruptible (see
 * Executions). A writer interrupted by a stopping engine (the reconcile or sweep loop, a handler
 * past the shutdown grace) therefore never counts as not sent a command the station may already
 * have, which the outbox handler, or the restarted instance, would then send a second time. Once
 * the engine has been stopping for its shutdown grace, writes stop waiting: a send still under
 * way then has the outcome "unknown" (see DirectSendOutcome), and its entry is the next
 * instance's to send.
 */
export const installDirectSend = (options: EngineOptions, consumer: string) =>
  Effect.gen(function* () {
    const deps = yield* directSendDepsOf(options)
    yield* Effect.forkScoped(Effect.repeat(watchdog(deps), Schedule.spaced(WATCHDOG_INTERVAL)))
    yield* Effect.addFinalizer(() => closeDirectSend(deps))
    const carrying = yield* FiberSet.make()
    const runCarry = yield* FiberSet.runtime(carrying)<never>()
    yield* deps.dispatch.install({
      consumer,
      correlationTtlMs: options.correlationTtlMs,
      handle: (command, state, entryId, jobOrder) => handOver(deps, command, state, entryId, jobOrder),
      carryOut: (entries, version, scope) => carryOut(deps, runCarry, entries, version, scope)
    })
    /** The engine began to stop: after `graceMs`, writes no longer wait for their sends. */
    const stopping = (graceMs: number) =>
      // Interruptible: forked in a finalizer, it would not be otherwise (and the stop would wait for it).
      Effect.forkDetach(Effect.interruptible(Effect.sleep(graceMs).pipe(Effect.andThen(giveUp(deps))))).pipe(
        Effect.map((timer) => void (deps.graceTimer = timer))
      )
    return { stopping } as const
  })
