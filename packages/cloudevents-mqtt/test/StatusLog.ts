import { Effect, Stream } from "effect"
import type { MqttStatus } from "@microdcs/cloudevents-mqtt"

/** Every status the connection goes through from now on, in order (for tests that a connection never reconnected). */
export const statusLog = (statusChanges: Stream.Stream<MqttStatus>) =>
  Effect.gen(function* () {
    const seen: Array<MqttStatus> = []
    yield* statusChanges.pipe(
      Stream.runForEach((status) => Effect.sync(() => seen.push(status))),
      Effect.forkScoped
    )
    return seen
  })
