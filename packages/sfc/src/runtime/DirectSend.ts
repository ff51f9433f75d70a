import { Deferred, Effect, Either, Exit, Fiber, FiberId, FiberSet, Schedule } from "effect"
import { decodeJobOrderRecord } from "@microdcs/job-state"
import { Nudges, SfcCorrelations, Valkey, ValkeyStreams } from "@microdcs/store"
import type { ExecutionState } from "../engine/ExecutionState.js"
import type { CommandEntry, JobOrderEntry, JobResponseEntry } from "../engine/Outbox.js"
import { CommandDispatch, type DirectSendOutcome } from "./CommandDispatch.js"
import type { EngineOptions } from "./EngineOptions.js"
import { JobOrderTransitions } from "./JobOrderTransitions.js"
import { entryOperation, jobOrderOperation, moveJobOrder, sendCommand, storeResponse, wantsSend } from "./OutboxHandler.js"
import { StationPort } from "./StationPort.js"

/** What the outbox handler's code this module runs needs. */
type HandlerServices = Effect.Effect.Context<ReturnType<typeof sendCommand> | ReturnType<typeof moveJobOrder> | ReturnType<typeof storeResponse>>

/** The operation id of the Run entry of a start write (always version 1), as its handler uses it. */
const runOperation = (jobId: string) => jobOrderOperation(jobId, "1", "Run")

/** How long a direct send may take before its outbox entry takes over (checked every WATCHDOG_INTERVAL). */
const DIRECT_SEND_TIMEOUT_MS = 5_000
const WATCHDOG_INTERVAL = "1 second"

/** How long the engine's stop waits for direct sends under way (a write may send a few commands). */
const UNDERWAY_WAIT = "15 seconds"

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
    const dispatch = yield* CommandDispatch
    const jobOrders = yield* JobOrderTransitions
    const correlations = yield* SfcCorrelations
    const station = yield* StationPort
    const streams = yield* ValkeyStreams
    const valkey = yield* Valkey
    const context = yield* Effect.context<HandlerServices>()
    const nudges = yield* Effect.provide(Nudges, Nudges.Default)
    // A write made here does not nudge the work consumers (its entries need no handler if all goes
    // well); one whose send or move did not go well does, so the handler takes its entry at once
    // instead of at the next fallback poll. A lost nudge still leaves the poll.
    const nudgeHandlers = (scope: string) => Effect.ignore(nudges.nudge("sfc", scope))
    // `true`: carried out (nothing more for the entry to do); `false`: left to the entry.
    const carriedOut = Effect.succeed(true)
    const notSent = Effect.succeed(false)

    /** The main state of a job order document (undefined when it does not decode). */
    const mainOf = (jobOrderDoc: string): string | undefined => {
      const decoded = decodeJobOrderRecord(jobOrderDoc)
      return Either.isRight(decoded) ? decoded.right.state.main : undefined
    }

    /** The job order's main state: from the CAS's read when there was one, else read now (with the pointer). */
    const jobOrderMain = (command: CommandEntry, jobOrderDoc: string | null | undefined) => {
      if (jobOrderDoc === null) return Effect.succeed(undefined)
      if (jobOrderDoc !== undefined) return Effect.succeed(mainOf(jobOrderDoc))
      return Effect.all(
        [jobOrders.load(command.jobId), correlations.remember(command.correlationId, command.jobId, options.correlationTtlMs)],
        { concurrency: "unbounded" }
      ).pipe(Effect.map(([order]) => order?.state.main))
    }

    // The outbox handler's full path (a paused or pausing job), with the services it needs.
    const fullPath = (command: CommandEntry) => Effect.as(Effect.provide(sendCommand(command, options), context), true)

    // The gate and the send, in plain code around the few steps that need the store or the
    // station (the hot path: one send per step).
    const send = (command: CommandEntry, state: ExecutionState, jobOrderDoc: string | null | undefined): Effect.Effect<boolean, unknown> => {
      if (state.status === "paused") return fullPath(command)
      if (jobOrderDoc === undefined) return Effect.flatMap(jobOrderMain(command, undefined), (main) => sendFor(command, state, main))
      return sendFor(command, state, jobOrderDoc === null ? undefined : mainOf(jobOrderDoc))
    }
    const sendFor = (command: CommandEntry, state: ExecutionState, main: string | undefined): Effect.Effect<boolean, unknown> => {
      if (main === undefined) return carriedOut
      // Run has not landed yet (the start write's first commands): move the job order first,
      // as the Run entry would (same operation id: the start write is always version 1), so a
      // job never races ahead of its order reaching Running, where the MES can Stop it. The
      // Run entry then finds it done. A refused Run is the entry's to sort out.
      if (main === "AllowedToStart") {
        const op = runOperation(command.jobId)
        return Effect.flatMap(jobOrders.apply(command.jobId, "Run", op), (ran) => {
          if (ran._tag !== "Applied") return notSent
          dispatch.moved(op)
          return gateAndSend(command, state, ran.to.split("_")[0]!)
        })
      }
      return gateAndSend(command, state, main)
    }
    const gateAndSend = (command: CommandEntry, state: ExecutionState, main: string): Effect.Effect<boolean, unknown> => {
      if (state.status === "running" && main === "Interrupted") return fullPath(command)
      if (!wantsSend(command, main, state)) return carriedOut
      dispatch.rememberJob(command.correlationId, command.jobId)
      return Effect.as(station.send(command), true)
    }

    /**
     * Another instance may hold the entry pending and wait for this one: settle it for the group.
     * Acknowledgements gather for one turn of the event loop and go out as one XACK per stream.
     */
    const toAck = new Map<string, Array<string>>()
    const flush = Effect.suspend(() => {
      const batches = [...toAck]
      toAck.clear()
      return Effect.forEach(batches, ([scope, ids]) =>
        valkey.key("sfcWork", { scope }).pipe(Effect.flatMap((stream) => streams.ack(stream, options.workGroup, ids)), Effect.ignore)
      )
    })
    const acknowledge = (scope: string, entryId: string) =>
      Effect.suspend(() => {
        const first = toAck.size === 0
        const ids = toAck.get(scope) ?? []
        ids.push(entryId)
        toAck.set(scope, ids)
        return first ? Effect.forkDaemon(Effect.sleep(0).pipe(Effect.zipRight(flush))) : Effect.void
      })

    /** One direct send with its outcome: `true` when carried out (the entry then needs nothing more). */
    const attempt = (command: CommandEntry, state: ExecutionState, entryId: string | undefined, jobOrderDoc: string | null | undefined) =>
      Effect.matchCauseEffect(Effect.interruptible(Effect.suspend(() => send(command, state, jobOrderDoc))), {
        onSuccess: (sent) => {
          if (!sent || entryId === undefined) return Effect.succeed(sent)
          dispatch.locate(command, state.scope, entryId)
          return Effect.as(acknowledge(state.scope, entryId), true)
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
    const underway = new Map<Deferred.Deferred<DirectSendOutcome>, { readonly fiber: Fiber.RuntimeFiber<unknown>; readonly deadline: number; readonly command: CommandEntry }>()
    const watchdog = Effect.suspend(() => {
      const now = Date.now()
      const late = [...underway.values()].filter((send) => send.deadline <= now)
      return Effect.forEach(late, ({ fiber, ...send }) =>
        Effect.logInfo("direct send took too long; the outbox entry takes over").pipe(
          Effect.annotateLogs({ jobId: send.command.jobId, action: send.command.action }),
          Effect.zipRight(Effect.fork(Fiber.interrupt(fiber)))
        ), { discard: true })
    })
    yield* Effect.forkScoped(Effect.repeat(watchdog, Schedule.spaced(WATCHDOG_INTERVAL)))

    // The writes waiting for their send; `stopping` lets them go after the shutdown grace.
    // `answered`: the write has its outcome (the send's, or "unknown" from giveUp).
    interface Waiting {
      readonly outcome: Deferred.Deferred<DirectSendOutcome>
      answered: boolean
    }
    const waiting = new Set<Waiting>()
    let gaveUp = false
    let closed = false
    let graceTimer: Fiber.RuntimeFiber<void> | undefined
    const giveUp = Effect.sync(() => {
      gaveUp = true
      for (const write of waiting) {
        write.answered = true
        Deferred.unsafeDone(write.outcome, Exit.succeed("unknown"))
      }
    })

    const handOver = (command: CommandEntry, state: ExecutionState, entryId: string | undefined, jobOrderDoc: string | null | undefined) =>
      Effect.suspend(() => {
        // Stopping: the outbox entry is the way (this process's handler, or the next instance).
        if (closed || gaveUp) return notSent
        const write: Waiting = { outcome: Deferred.unsafeMake<DirectSendOutcome>(FiberId.none), answered: false }
        waiting.add(write)
        // The send's end, however it ends (interrupted by the watchdog: not sent as far as this
        // process knows). A write that stopped waiting meanwhile: a later delivery of the entry
        // finds what happened. The watchdog bounds the send itself, also once the write stopped waiting.
        let finished = false
        const finish = (exit: Exit.Exit<boolean>) =>
          Effect.suspend(() => {
            finished = true
            underway.delete(write.outcome)
            const sent = Exit.isSuccess(exit) && exit.value
            if (write.answered) dispatch.resolveUnknown(command, sent)
            else {
              write.answered = true
              Deferred.unsafeDone(write.outcome, Exit.succeed(sent))
            }
            return sent ? Effect.void : nudgeHandlers(state.scope)
          })
        return Effect.forkDaemon(Effect.onExit(attempt(command, state, entryId, jobOrderDoc), finish)).pipe(
          Effect.flatMap((fiber) => {
            if (!finished) underway.set(write.outcome, { fiber, deadline: Date.now() + DIRECT_SEND_TIMEOUT_MS, command })
            return Deferred.await(write.outcome)
          }),
          Effect.ensuring(Effect.sync(() => waiting.delete(write)))
        )
      })

    // At shutdown (after the pollers stopped), no send starts any more and those under way end
    // (or are given up on after the grace); then the entries of commands sent here that the work
    // poller has not acknowledged are deleted: restarted, this instance would not remember
    // sending them and would send them again.
    const deleteUnseen = Effect.suspend(() => {
      const byScope = new Map<string, Array<string>>()
      for (const { scope, entryId } of dispatch.unseenEntries()) byScope.set(scope, [...(byScope.get(scope) ?? []), entryId])
      return Effect.forEach(byScope, ([scope, ids]) =>
        valkey.key("sfcWork", { scope }).pipe(Effect.flatMap((stream) => streams.ackAndDelete(stream, options.workGroup, ids)), Effect.ignore)
      )
    })
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        closed = true
        return dispatch.awaitUnderway(UNDERWAY_WAIT)
      }).pipe(
        Effect.zipRight(Effect.suspend(() => (graceTimer ? Fiber.interrupt(graceTimer) : Effect.void))),
        Effect.zipRight(deleteUnseen)
      )
    )
    // The job order moves and the response of a write, carried out here at once instead of after
    // the work poller read their entries: the outbox handler's own code, so an entry marked done
    // is one the handler would have found done. Interrupted when the engine stops (the entries
    // are then the next instance's); a failure is logged and left to the entry.
    const carrying = yield* FiberSet.make()
    const runCarry = yield* FiberSet.runtime(carrying)<never>()
    const carryOne = (entry: JobOrderEntry | JobResponseEntry, version: number, scope: string): Effect.Effect<void, never, HandlerServices> => {
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
            Effect.zipRight(nudgeHandlers(scope))
          )
      })
    }
    const carryOut = (entries: ReadonlyArray<JobOrderEntry | JobResponseEntry>, version: number, scope: string): void => {
      if (closed || gaveUp || entries.length === 0) return
      // In outbox order: Complete after the Run of the same write. The services once per write.
      runCarry(Effect.provide(Effect.forEach(entries, (entry) => carryOne(entry, version, scope), { discard: true }), context))
    }

    yield* dispatch.install({
      consumer,
      correlationTtlMs: options.correlationTtlMs,
      handle: handOver,
      carryOut
    })

    /** The engine began to stop: after `graceMs`, writes no longer wait for their sends. */
    const stopping = (graceMs: number) =>
      // Interruptible: forked in a finalizer, it would not be otherwise (and the stop would wait for it).
      Effect.forkDaemon(Effect.interruptible(Effect.sleep(graceMs).pipe(Effect.zipRight(giveUp)))).pipe(
        Effect.map((timer) => void (graceTimer = timer))
      )
    return { stopping } as const
  })
