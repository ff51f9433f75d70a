import { Effect } from "effect"
import type { SfcJobOrderRead } from "@microdcs/store"
import { type CommandEntry, type ExecutionState, isStopAfterEnd } from "@microdcs/sfc"
import type { DirectSendDeps } from "./DirectSendDeps.js"
import { jobOrderOperation } from "./EntryOperations.js"
import { orderJobId, sendCommand, wantsSend } from "./OutboxHandler.js"

/**
 * The gate and the send, in plain code around the few steps that need the store or the
 * station (the hot path: one send per step). The gate is the outbox handler's own.
 */

// `true`: carried out (nothing more for the entry to do); `false`: left to the entry.
const carriedOut = Effect.succeed(true)
export const notSent = Effect.succeed(false)

/** The operation id of the Run entry of a start write (always version 1), as its handler uses it. */
const runOperation = (jobId: string) => jobOrderOperation(jobId, "1", "Run")

/** The job order's main state, read now (with the pointer): for a write whose CAS did not read it. */
const jobOrderMain = (deps: DirectSendDeps, command: CommandEntry, state: ExecutionState) =>
  Effect.all(
    [deps.jobOrders.load(orderJobId(state)), deps.correlations.remember(command.correlationId, command.jobId, deps.options.correlationTtlMs)],
    { concurrency: "unbounded" }
  ).pipe(Effect.map(([order]) => order?.state.main))

// The outbox handler's full path (a paused or pausing job), with the services it needs.
const fullPath = (deps: DirectSendDeps, command: CommandEntry) => Effect.as(Effect.provide(sendCommand(command, deps.options), deps.context), true)

const sendNow = (deps: DirectSendDeps, command: CommandEntry): Effect.Effect<boolean, unknown> => {
  deps.dispatch.rememberJob(command.correlationId, command.jobId)
  return Effect.as(deps.station.send(command), true)
}

const gateAndSend = (deps: DirectSendDeps, command: CommandEntry, state: ExecutionState, main: string): Effect.Effect<boolean, unknown> => {
  if (state.status === "running" && main === "Interrupted") return fullPath(deps, command)
  return wantsSend(command, main, state) ? sendNow(deps, command) : carriedOut
}

const sendFor = (deps: DirectSendDeps, command: CommandEntry, state: ExecutionState, main: string | undefined): Effect.Effect<boolean, unknown> => {
  if (main === undefined) return carriedOut
  // Run has not landed yet (the start write's first commands): move the job order first,
  // as the Run entry would (same operation id: the start write is always version 1), so a
  // job never races ahead of its order reaching Running, where the MES can Stop it. The
  // Run entry then finds it done. A refused Run is the entry's to sort out.
  if (main === "AllowedToStart") {
    const op = runOperation(command.jobId)
    return Effect.flatMap(deps.jobOrders.apply(command.jobId, "Run", op), (ran) => {
      if (ran._tag !== "Applied") return notSent
      deps.dispatch.moved(op)
      return gateAndSend(deps, command, state, ran.to.split("_")[0]!)
    })
  }
  return gateAndSend(deps, command, state, main)
}

/** The job order's main state from the CAS's read when there was one (`null`: missing), else read now. */
export const send = (deps: DirectSendDeps, command: CommandEntry, state: ExecutionState, jobOrder: SfcJobOrderRead | null | undefined): Effect.Effect<boolean, unknown> => {
  if (state.status === "paused") return fullPath(deps, command)
  // A stored action's stop once the job is over: whatever the job order says (the MES ended it).
  if (isStopAfterEnd(state, command)) return sendNow(deps, command)
  // A sub-recipe's child has no job order of its own: its root job's is read now.
  if (state.parent !== undefined) return Effect.flatMap(jobOrderMain(deps, command, state), (read) => sendFor(deps, command, state, read))
  if (jobOrder === null) return sendFor(deps, command, state, undefined)
  const main = jobOrder === undefined ? false : deps.jobOrders.mainAfterWrite(command.jobId, state.scope, jobOrder)
  if (main === false) return Effect.flatMap(jobOrderMain(deps, command, state), (read) => sendFor(deps, command, state, read))
  return sendFor(deps, command, state, main)
}
