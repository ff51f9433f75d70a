import { Effect, type Scope } from "effect"
import type { ScheduledEvent } from "./StationScript.js"

/**
 * Emits each scheduled event every `everyMs` (the first after one period), a new id each time,
 * until the scope closes. A send that fails is logged; the next period tries again.
 */
export const scheduleEvents = <E>(
  schedule: ReadonlyArray<ScheduledEvent>,
  emit: (event: ScheduledEvent) => Effect.Effect<void, E>
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.forEach(
    schedule,
    (event) =>
      Effect.sleep(event.everyMs).pipe(
        Effect.andThen(emit(event).pipe(Effect.catch((error) => Effect.logWarning("island-sim: scheduled event not sent", error)))),
        Effect.forever,
        Effect.forkScoped
      ),
    { discard: true }
  )
