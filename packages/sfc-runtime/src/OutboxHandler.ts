import { Clock, Data, Effect } from "effect"
import { ConsumerHeartbeats, JobResponseDao, jsonDocument, SfcCorrelations, StateMoved } from "@microdcs/store"
import type { PollerEntry } from "@microdcs/poller"
import { awaitsSend, sendsOnce, type CommandEntry, type ExecutionState, isHeld, isStopAfterEnd, type JobOrderEntry, type JobResponseEntry } from "@microdcs/sfc"
import { followHold } from "./FollowOrder.js"
import { CommandDispatch } from "./CommandDispatch.js"
import { decodeOutboxEntry } from "./OutboxCodec.js"
import { jobOrderOperation, responseDocument, responseOperation } from "./EntryOperations.js"
import type { EngineOptions } from "./EngineOptions.js"
import { Executions } from "./Executions.js"
import { JobOrderTransitions } from "./JobOrderTransitions.js"
import { StationPort } from "./StationPort.js"
import { endSubRecipe, startSubRecipe, subRecipeDone } from "./SubRecipeEntries.js"

/**
 * Carries out one entry of `sfc:work:{scope}`. Every branch is idempotent, since an
 * entry can be delivered more than once: a transition already applied is a no-op, a command
 * resend reuses its correlation id, the response put has a deterministic id and operation id.
 */
export const handleWorkEntry = (options: EngineOptions) => (entry: PollerEntry) =>
  Effect.gen(function* () {
    const outbox = decodeOutboxEntry(entry.fields)
    if (!outbox) {
      yield* Effect.logWarning("ignoring a work entry that is no outbox entry").pipe(Effect.annotateLogs({ id: entry.id, scope: entry.scope }))
      return
    }
    const version = entry.fields["version"] ?? "0"
    switch (outbox.type) {
      case "command":
        return yield* handleCommandEntry(outbox, entry, options)
      case "joborder":
        return yield* moveJobOrder(outbox, version)
      case "jobresponse":
        return yield* storeResponse(outbox, entry.scope)
      case "subrecipe":
        return yield* startSubRecipe(outbox, options)
      case "subrecipe-end":
        return yield* endSubRecipe(outbox)
      case "subrecipe-done":
        return yield* subRecipeDone(outbox)
    }
  })

/** The job whose order gates an execution's commands: its own, or a sub-recipe child's root job. */
export const orderJobId = (state: ExecutionState): string => state.parent?.rootJobId ?? state.jobId

/** Job order states in which the engine dispatches (before `Run` lands, and while running). */
export const dispatchable = (main: string) => main === "Running" || main === "AllowedToStart"

/** A command entry another live instance is sending itself; retried by the poller until that settles. */
export class LeftToSender extends Data.TaggedError("LeftToSender")<{ readonly sender: string; readonly correlationId: string }> {}

/**
 * A command entry whose direct send this process gave up waiting for while stopping: the station
 * may have it. Failed, so the entry stays pending; the next instance sends it (same correlation id).
 */
export class SendOutcomeUnknown extends Data.TaggedError("SendOutcomeUnknown")<{ readonly correlationId: string }> {}

/**
 * How long a command entry belongs to the instance that wrote it (and sends it directly) while
 * that instance is alive. After that another instance sends it too: a resend with the same
 * correlation id is harmless, a lost command is not.
 */
export const DIRECT_SEND_GRACE_MS = 5_000

/** Epoch ms of a stream id (`{ms}-{seq}`). */
const entryTime = (id: string) => Number(id.slice(0, id.indexOf("-")))

/**
 * The outbox entry of a command: skipped when this process already sent it directly; left to
 * the instance that did (or is doing) so while it lives; otherwise handled as the recovery path.
 */
const handleCommandEntry = (command: CommandEntry, entry: PollerEntry, options: EngineOptions) =>
  Effect.gen(function* () {
    const dispatch = yield* CommandDispatch
    const here = yield* dispatch.handledHere(command)
    if (here === "unknown") return yield* new SendOutcomeUnknown({ correlationId: command.correlationId })
    if (here) return
    const sender = entry.fields["sender"]
    const own = dispatch.current()?.consumer
    if (sender !== undefined && sender !== own && (yield* Clock.currentTimeMillis) - entryTime(entry.id) < DIRECT_SEND_GRACE_MS) {
      const heartbeats = yield* ConsumerHeartbeats
      const heartbeat = yield* heartbeats.of({ kind: "sfc", group: options.workGroup, consumer: own ?? sender }, HEARTBEAT_PROBE_TTL_MS)
      const dead = yield* heartbeat.dead([sender])
      if (dead.length === 0) return yield* new LeftToSender({ sender, correlationId: command.correlationId })
    }
    return yield* sendCommand(command, options)
  })

/** Only `dead` of the probe is used: its lifetime is never written. */
const HEARTBEAT_PROBE_TTL_MS = 3_000

/** Rounds of `sendCommand` before giving up (the entry is then retried by the poller). */
const MAX_SEND_ROUNDS = 10

const sendStopOfGone = (command: CommandEntry) =>
  Effect.andThen(StationPort, (station) => station.send(command)).pipe(
    Effect.tap(() => Effect.logInfo("stop sent for a job whose execution is gone").pipe(Effect.annotateLogs({ jobId: command.jobId, action: command.action })))
  )

const notSentWithout = (command: CommandEntry) =>
  Effect.logInfo("command not sent: the job has no order or no execution").pipe(Effect.annotateLogs({ jobId: command.jobId, action: command.action }))

/**
 * Sends a command, gated on the job order (never for a job the MES paused, stopped or aborted)
 * and on the execution still waiting for exactly this send. A pulse (`P`) is the exception to
 * the second gate: its step does not wait, so by the time the entry is handled the step (or
 * the whole job) may be over. It is still sent, unless the MES ended the job.
 *
 * A paused job's command is held back: recorded in the execution (one CAS on the paused
 * state), so the Resume that follows that write sends it. A Resume that came first makes the
 * CAS find a running state; the next round then sends.
 */
export const sendCommand = (command: CommandEntry, options: EngineOptions) =>
  Effect.gen(function* () {
    const jobOrders = yield* JobOrderTransitions
    const executions = yield* Executions
    for (let round = 0; round < MAX_SEND_ROUNDS; round++) {
      const execution = yield* executions.load(command.jobId)
      // A sub-recipe's child has no job order: its commands go by its root job's.
      const order = yield* jobOrders.load(execution._tag === "Some" ? orderJobId(execution.value.state) : command.jobId)
      // A stop is whole in itself: it goes out even once Clear or Cancel removed the execution.
      if (execution._tag === "None") return yield* (command.stop === true ? sendStopOfGone(command) : notSentWithout(command))
      const state = execution.value.state
      // The stop of a stored action once the job is over goes out whatever its job order says.
      if (isStopAfterEnd(state, command)) return yield* sendIfWanted(command, options, order?.state.main ?? "", state)
      if (!order) return yield* notSentWithout(command)
      // The MES paused the job but the execution has not followed yet: let it follow first, so
      // the command is held back on a paused state, which only a later Resume can release.
      if (state.status === "running" && order.state.main === "Interrupted") {
        // A child has no order of its own: it follows its root job's.
        yield* followHold(command.jobId, orderJobId(state))
        continue
      }
      if (state.status !== "paused") return yield* sendIfWanted(command, options, order.state.main, state)
      if (!awaitsSend(state, command) || isHeld(state, command)) {
        return yield* Effect.logDebug("command not held back: already held, or no longer wanted").pipe(Effect.annotateLogs({ jobId: command.jobId, action: command.action }))
      }
      const held = yield* executions.apply(command.jobId, { type: "hold", command })
      if (held._tag === "Written") {
        return yield* Effect.logDebug("command held back until the job resumes").pipe(Effect.annotateLogs({ jobId: command.jobId, action: command.action }))
      }
    }
    return yield* new StateMoved({ key: command.jobId, attempts: MAX_SEND_ROUNDS })
  })

/**
 * The gate for a running (or ended) execution: whether `command` goes out, given the job
 * order's main state and the execution state read after the write that emitted it.
 */
export const wantsSend = (command: CommandEntry, main: string, state: ExecutionState): boolean => {
  if (isStopAfterEnd(state, command)) return true
  const open =
    state.status === "running" && state.actions.some((a) => a.correlationId === command.correlationId && a.state === "dispatched")
  // Any qualifier but N: a pulse, a stored or delayed command, a stop (sent once, not waited for).
  const pulse = sendsOnce(state, command)
  // Completed or failed by the engine itself: the job order follows (or already followed) to
  // Ended/Aborted; stopped, aborted or paused executions are the MES's doing.
  const endedByEngine = state.status === "completed" || state.status === "failed"
  return open
    ? dispatchable(main)
    : pulse && ((state.status === "running" && dispatchable(main)) || (endedByEngine && (dispatchable(main) || main === "Ended" || main === "Aborted")))
}

/** The gate for a running (or ended) execution, then the send. */
const sendIfWanted = (command: CommandEntry, options: EngineOptions, main: string, state: ExecutionState) =>
  Effect.gen(function* () {
    if (!wantsSend(command, main, state)) {
      return yield* Effect.logDebug("command not sent: the job order or the execution no longer wants it").pipe(
        Effect.annotateLogs({ jobId: command.jobId, action: command.action, jobOrder: main, execution: state.status })
      )
    }
    // Replies carry only the correlation id: remember which job it belongs to before sending.
    yield* (yield* SfcCorrelations).remember(command.correlationId, command.jobId, options.correlationTtlMs)
    ;(yield* CommandDispatch).rememberJob(command.correlationId, command.jobId)
    const station = yield* StationPort
    yield* station.send(command)
  })

/** A Complete or Abort whose Run has not landed yet; retried by the poller. */
export class RunNotYetApplied extends Data.TaggedError("RunNotYetApplied")<{ readonly jobId: string; readonly trigger: string }> {}

/** Applies an internal trigger; if the MES moved the job order elsewhere, the execution follows. */
export const moveJobOrder = (entry: JobOrderEntry, version: string) =>
  Effect.gen(function* () {
    const jobOrders = yield* JobOrderTransitions
    const executions = yield* Executions
    const outcome = yield* jobOrders.apply(entry.jobId, entry.trigger, jobOrderOperation(entry.jobId, version, entry.trigger), entry.reason)
    // The entries of one write are handled concurrently, so Complete (or Abort) of a recipe that
    // finished at once can arrive before its Run. Fail the entry: the poller delivers it again
    // after a short backoff, when Run has landed.
    if (outcome._tag === "Refused" && entry.trigger !== "Run" && outcome.from.startsWith("AllowedToStart")) {
      return yield* new RunNotYetApplied({ jobId: entry.jobId, trigger: entry.trigger })
    }
    // Only a job order that went back (RevokeStart) or away (Cancel) before reaching Running
    // aborts the execution. Any later state means Run landed before (a redelivered entry) and
    // the MES moved on: the execution follows those moves through the change stream.
    if (outcome._tag !== "Refused" || entry.trigger !== "Run") return
    const main = outcome.from.split("_")[0]
    if (main === "NotAllowedToStart" || main === "EndState") {
      // The job never ran: drop the execution entirely, so a later Start creates a fresh one
      // (aborting it would leave a terminal state that a create-only start cannot replace).
      yield* Effect.logInfo("job order did not allow Run; removing the execution").pipe(Effect.annotateLogs({ jobId: entry.jobId, state: outcome.from }))
      yield* executions.remove(entry.jobId)
    }
  })

/** The job order a response answers, for its actuals: the held copy, else read; `undefined` when gone or unreadable (no actuals then). */
const jobOrderOfResponse = (jobId: string) =>
  Effect.gen(function* () {
    const jobOrders = yield* JobOrderTransitions
    const order = jobOrders.held(jobId) ?? (yield* jobOrders.load(jobId).pipe(Effect.catchTag("WrongType", () => Effect.succeed(undefined))))
    return order?.jobOrder
  })

/**
 * Stores the job response create-only: its id is deterministic and only the engine writes it,
 * so a conflict means a redelivered entry (or one taken over from a slow instance) already
 * stored it, and the response is written, and announced on the change stream, exactly once.
 */
export const storeResponse = (entry: JobResponseEntry, scope: string) =>
  Effect.gen(function* () {
    const responses = yield* JobResponseDao
    const jobOrder = yield* jobOrderOfResponse(entry.jobId)
    yield* responses
      .put({
        id: entry.responseId,
        scope,
        orderId: entry.jobId,
        state: entry.state,
        startTime: entry.startTime,
        endTime: entry.endTime,
        doc: jsonDocument(responseDocument(entry, jobOrder)),
        expectedVersion: 0,
        change: "ResultUpdate",
        op: responseOperation(entry.responseId)
      })
      .pipe(
        Effect.catchTag("VersionConflict", () =>
          Effect.logDebug("job response already stored").pipe(Effect.annotateLogs({ jobId: entry.jobId }))
        )
      )
  })
