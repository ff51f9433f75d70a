import { Effect, Result, type Scope, Stream } from "effect"
import {
  eventsTopic,
  type IncomingMessage,
  type InvalidTopic,
  type MqttConnectionService,
  type MqttSubscribeError,
  scopeOf,
  type TopicConfig
} from "@microdcs/cloudevents-mqtt"
import { fromStoredState, JOB_ORDER_STATUS_EVENT_TYPE, normalizedName, type StateName } from "@microdcs/job-state"

/** One job order state an island announced. */
export interface JobStateSeen {
  readonly scope: string
  readonly jobId: string
  readonly state: StateName
}

/** A state a job order does not leave again: it ended, was aborted or was cleared. */
export const isEndState = (state: StateName): boolean => state.startsWith("Ended") || state === "Aborted" || state === "EndState"

const stateOf = (message: IncomingMessage): JobStateSeen | undefined => {
  if (Result.isFailure(message.decoded) || message.decoded.success.type !== JOB_ORDER_STATUS_EVENT_TYPE) return undefined
  const event = message.decoded.success
  const data = event.data as { readonly JobOrderID?: unknown; readonly JobState?: unknown } | undefined
  const state = fromStoredState(data?.JobState)
  const scope = scopeOf(event)
  if (typeof data?.JobOrderID !== "string" || Result.isFailure(state) || scope === undefined) return undefined
  return { scope, jobId: data.JobOrderID, state: normalizedName(state.success) }
}

/**
 * Follows the job order status events of the scopes (`P/{scope}[/D]/events`, one per
 * transition: the island's job control sends those of MES methods, its publisher those of the
 * engine's Run, Complete and Abort) and hands `onState` each state. Events can come out of order
 * and twice; an end state is final, so a caller that only waits for ends needs no ordering.
 */
export const followJobStates = (
  mqtt: MqttConnectionService,
  topics: TopicConfig,
  scopes: ReadonlyArray<string>,
  onState: (seen: JobStateSeen) => Effect.Effect<void>
): Effect.Effect<void, InvalidTopic | MqttSubscribeError, Scope.Scope> =>
  Effect.forEach(
    scopes,
    (scope) =>
      Effect.gen(function* () {
        const messages = yield* mqtt.subscribe(yield* Effect.fromResult(eventsTopic(topics, scope)), { qos: 1 })
        yield* messages.pipe(
          Stream.runForEach((message) => {
            const seen = stateOf(message)
            return (seen !== undefined && seen.scope === scope ? onState(seen) : Effect.void).pipe(Effect.andThen(message.ack))
          }),
          Effect.forkScoped
        )
      }),
    { discard: true }
  )
