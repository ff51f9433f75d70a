import type { Context, Deferred, Effect, Fiber } from "effect"
import type { Nudges, SfcCorrelations, ValkeyService, ValkeyStreams } from "@microdcs/store"
import type { CommandEntry } from "@microdcs/sfc"
import type { CommandDispatch, DirectSendOutcome } from "./CommandDispatch.js"
import type { EngineOptions } from "./EngineOptions.js"
import type { JobOrderTransitions } from "./JobOrderTransitions.js"
import type { moveJobOrder, sendCommand, storeResponse } from "./OutboxHandler.js"
import type { StationPortService } from "./StationPort.js"

/** What the outbox handler's code the direct send runs needs. */
export type HandlerServices = Effect.Services<ReturnType<typeof sendCommand> | ReturnType<typeof moveJobOrder> | ReturnType<typeof storeResponse>>

/** A write waiting for its send. `answered`: the write has its outcome (the send's, or "unknown" from giving up). */
export interface Waiting {
  readonly outcome: Deferred.Deferred<DirectSendOutcome>
  answered: boolean
}

/** A send under way, for the watchdog. */
export interface Underway {
  readonly fiber: Fiber.Fiber<unknown>
  readonly deadline: number
  readonly command: CommandEntry
}

/** What the direct send of one engine instance works with: its services and what it keeps while installed. */
export interface DirectSendDeps {
  readonly options: EngineOptions
  readonly dispatch: CommandDispatch["Service"]
  readonly jobOrders: JobOrderTransitions["Service"]
  readonly correlations: SfcCorrelations["Service"]
  readonly station: StationPortService
  readonly streams: ValkeyStreams["Service"]
  readonly valkey: ValkeyService
  readonly nudges: Nudges["Service"]
  readonly context: Context.Context<HandlerServices>
  /** Acknowledgements gathered for one turn of the event loop, by scope. */
  readonly toAck: Map<string, Array<string>>
  /** Sends what `toAck` gathered (built once, run once per turn that gathered any). */
  readonly flushAcks: Effect.Effect<unknown>
  readonly underway: Map<Deferred.Deferred<DirectSendOutcome>, Underway>
  // The writes waiting for their send; `stopping` lets them go after the shutdown grace.
  readonly waiting: Set<Waiting>
  gaveUp: boolean
  closed: boolean
  graceTimer: Fiber.Fiber<void> | undefined
}
