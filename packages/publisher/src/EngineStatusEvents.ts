import { Effect, Result } from "effect"
import { eventsTopic, makeCloudEvent, type MessageTooLarge } from "@microdcs/cloudevents-mqtt"
import { JOB_ORDER_STATUS_EVENT_TYPE, JobStates, toStoredState } from "@microdcs/job-state"
import type { ChangeEntry } from "@microdcs/store"
import type { PublisherContext } from "./PublisherContext.js"

/**
 * The states the engine's own transitions lead to. MES methods get their status events from the
 * job-control ingress that ran them; the engine's transitions (Run when a recipe starts,
 * Complete when it finishes, Abort when it fails) have no such ingress, so the publisher, which
 * sees every change entry, emits theirs. An engine write carries an operation id starting `sfc:`.
 */
const engineTargets = {
  Run: JobStates.Running,
  Complete: JobStates.Ended_Completed,
  Abort: JobStates.Aborted
} as const

const isEngineTransition = (entry: ChangeEntry): entry is ChangeEntry & { change: keyof typeof engineTargets } =>
  entry.kind === "joborder" && entry.op.startsWith("sfc:") && Object.hasOwn(engineTargets, entry.change)

const skipTooLarge = (ctx: PublisherContext, scope: string, error: MessageTooLarge) =>
  Effect.andThen(
    ctx.stats.add("tooLarge"),
    Effect.logError("publisher: status event over the broker's maximum packet size; not published").pipe(
      Effect.annotateLogs({ scope, topic: error.topic, bytes: error.bytes, limit: error.limit })
    )
  )

/**
 * Publishes one status event (QoS 1, not retained) per engine transition in a batch, on the
 * scope's events topic. The event id is derived from the job order version, so a batch published
 * again sends the same events and an MES can drop the repeats. They go out together, in the
 * batch's order (one socket write, their PUBACKs awaited once): one after the other, a batch with
 * a few dozen transitions waited a round trip for each before the next batch could start. Any
 * failure fails the batch, which is then published again, except an event over the broker's
 * Maximum Packet Size: it would be refused again every time, so it is logged, counted and skipped.
 */
export const publishEngineStatusEvents = (ctx: PublisherContext, scope: string, entries: ReadonlyArray<ChangeEntry>) =>
  Effect.gen(function* () {
    const transitions = entries.filter(isEngineTransition)
    if (transitions.length === 0) return
    const topic = eventsTopic({ prefix: ctx.options.prefix, discriminator: ctx.options.discriminator }, scope)
    if (Result.isFailure(topic)) return yield* Effect.logWarning("publisher: no events topic for this scope").pipe(Effect.annotateLogs({ scope }))
    const outcomes = yield* ctx.mqtt.publishAll(
      transitions.map((entry) => ({
        _tag: "Publish" as const,
        topic: topic.success,
        event: makeCloudEvent({
          id: `${scope}/status/${entry.id}/v${entry.version}`,
          source: ctx.options.source,
          type: JOB_ORDER_STATUS_EVENT_TYPE,
          subject: scope,
          data: { JobOrderID: entry.id, JobState: toStoredState(engineTargets[entry.change]), Method: entry.change, Version: entry.version }
        }),
        options: { qos: 1 }
      }))
    )
    yield* Effect.forEach(outcomes, (outcome) => (outcome?._tag === "MessageTooLarge" ? skipTooLarge(ctx, scope, outcome) : Effect.void), { discard: true })
    const failure = outcomes.find((outcome) => outcome !== undefined && outcome._tag !== "MessageTooLarge")
    if (failure !== undefined) return yield* Effect.fail(failure)
  })
