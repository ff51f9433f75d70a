import { randomUUID } from "node:crypto"
import { Effect, Context, Layer } from "effect"
import { ReturnStatus } from "@microdcs/job-state"
import type { TriggerRow } from "@microdcs/store"
import { JobControl, type JobControlFailure } from "./JobControl.js"
import type { StatusEvent } from "./Request.js"
import { TriggerCatalog } from "./TriggerCatalog.js"
import { triggerJobOrderId, triggerRequest, type TriggerEvent } from "./TriggerMatch.js"

/** What one trigger did with one event. */
export type TriggerOutcome =
  | { readonly _tag: "Started"; readonly trigger: TriggerRow; readonly jobOrderId: string; readonly statusEvents: ReadonlyArray<StatusEvent> }
  /** The event's job order exists already: a redelivery, or another instance was first. */
  | { readonly _tag: "AlreadyStarted"; readonly trigger: TriggerRow; readonly jobOrderId: string }
  /** The acceptance checks refused it (unknown work master or reference, limit reached, ...); nothing was created. */
  | { readonly _tag: "Refused"; readonly trigger: TriggerRow; readonly jobOrderId: string; readonly kind: string; readonly message: string }

/**
 * Starts the job orders an event fires: for each matching trigger, a
 * StoreAndStart through `JobControl`, so the same acceptance checks and the same versioned put
 * as an MES's request; the job order id comes from the trigger and the event, so a redelivered
 * event meets its job order as taken and starts nothing twice. Transport-free: the MQTT
 * binding feeds it and publishes the status events.
 */
export class TriggerStarts extends Context.Service<TriggerStarts>()("@microdcs/job-control/TriggerStarts", {
  make: Effect.gen(function* () {
    const catalog = yield* TriggerCatalog
    const jobControl = yield* JobControl

    const startOne = (trigger: TriggerRow, event: TriggerEvent, source: string): Effect.Effect<TriggerOutcome, JobControlFailure> =>
      Effect.gen(function* () {
        const jobOrderId = triggerJobOrderId(trigger.id, event)
        const { reply, statusEvents } = yield* jobControl.handle(triggerRequest(trigger, event, source, randomUUID()))
        if (reply.status === ReturnStatus.NO_ERROR) return { _tag: "Started", trigger, jobOrderId, statusEvents } as const
        if (reply.error?.kind === "AlreadyExists") return { _tag: "AlreadyStarted", trigger, jobOrderId } as const
        const kind = reply.error?.kind ?? "Refused"
        const message = reply.error?.message ?? `ReturnStatus ${reply.status}`
        yield* Effect.logWarning("triggered job order refused by the acceptance checks; nothing created").pipe(
          Effect.annotateLogs({ trigger: trigger.id, jobOrderId, eventType: event.type, eventSource: event.source, eventId: event.id, kind, reason: message })
        )
        return { _tag: "Refused", trigger, jobOrderId, kind, message } as const
      })

    /** The outcome of every trigger the event fires (none when it fires none), one after the other. */
    const start = (event: TriggerEvent, source: string): Effect.Effect<ReadonlyArray<TriggerOutcome>, JobControlFailure> =>
      Effect.flatMap(catalog.match(event), (triggers) => Effect.forEach(triggers, (trigger) => startOne(trigger, event, source)))

    return { start } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
