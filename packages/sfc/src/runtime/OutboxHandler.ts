import { Effect } from "effect"
import { JobResponseDao, Valkey } from "@microdcs/store"
import type { PollerEntry } from "@microdcs/poller"
import type { CommandEntry, JobOrderEntry, JobResponseEntry } from "../engine/Outbox.js"
import { decodeOutboxEntry } from "./OutboxCodec.js"
import type { EngineOptions } from "./EngineOptions.js"
import { Executions } from "./Executions.js"
import { JobOrderTransitions } from "./JobOrderTransitions.js"
import { StationPort } from "./StationPort.js"

/**
 * Carries out one entry of `sfc:work:{scope}` (sfc.md §4). Every branch is idempotent, since an
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
        return yield* sendCommand(outbox, options)
      case "joborder":
        return yield* moveJobOrder(outbox, version)
      case "jobresponse":
        return yield* storeResponse(outbox, entry.scope)
    }
  })

/**
 * Sends a command, gated on the job order (never for a job the MES stopped) and on the
 * execution still waiting for exactly this send.
 */
const sendCommand = (command: CommandEntry, options: EngineOptions) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const jobOrders = yield* JobOrderTransitions
    const executions = yield* Executions
    const order = yield* jobOrders.load(command.jobId)
    if (!order || (order.state.main !== "Running" && order.state.main !== "AllowedToStart")) {
      return yield* Effect.logInfo("command not sent: the job order is not running").pipe(Effect.annotateLogs({ jobId: command.jobId, action: command.action }))
    }
    const execution = yield* executions.load(command.jobId)
    const open =
      execution._tag === "Some" &&
      execution.value.state.status === "running" &&
      execution.value.state.actions.some((a) => a.correlationId === command.correlationId && a.state === "dispatched")
    if (!open) return
    // Replies carry only the correlation id: remember which job it belongs to before sending.
    const key = yield* valkey.key("sfcCorrelation", { correlationId: command.correlationId })
    yield* valkey.command("remember correlation", (c) => c.set(key, command.jobId, "PX", options.correlationTtlMs))
    const station = yield* StationPort
    yield* station.send(command)
  })

/** Applies an internal trigger; if the MES moved the job order elsewhere, the execution follows. */
const moveJobOrder = (entry: JobOrderEntry, version: string) =>
  Effect.gen(function* () {
    const jobOrders = yield* JobOrderTransitions
    const executions = yield* Executions
    const outcome = yield* jobOrders.apply(entry.jobId, entry.trigger, `sfc:${entry.jobId}:${version}:${entry.trigger}`)
    if (outcome._tag === "Refused" && entry.trigger === "Run") {
      // The MES revoked or cancelled the start before the job order reached Running.
      yield* Effect.logInfo("job order did not allow Run; aborting the execution").pipe(Effect.annotateLogs({ jobId: entry.jobId, state: outcome.from }))
      yield* executions.apply(entry.jobId, { type: "abort", reason: `job order is ${outcome.from}` })
    }
  })

const storeResponse = (entry: JobResponseEntry, scope: string) =>
  Effect.gen(function* () {
    const responses = yield* JobResponseDao
    const op = `sfc:${entry.responseId}`
    // A redelivered entry finds its own write already there.
    if ((yield* responses.outcome(entry.responseId, op))._tag === "Some") return
    const doc = {
      ID: entry.responseId,
      JobOrderID: entry.jobId,
      StartTime: new Date(entry.startTime).toISOString(),
      EndTime: new Date(entry.endTime).toISOString(),
      JobState: entry.state,
      Data: entry.data,
      ...(entry.error !== undefined ? { Error: entry.error } : {})
    }
    yield* responses.put({
      id: entry.responseId,
      scope,
      orderId: entry.jobId,
      state: entry.state,
      startTime: entry.startTime,
      doc: JSON.stringify(doc),
      expectedVersion: -1,
      change: "ResultUpdate",
      op
    })
  })
