import { Effect, Result, Layer, Stream } from "effect"
import {
  commandFilters,
  makeCloudEvent,
  makeErrorReply,
  MqttConnection,
  mqttOptionsConfig,
  responseTopic
} from "@microdcs/cloudevents-mqtt"

// The README's example, type-checked with the package (not run as a test).
const topics = { prefix: "microdcs", discriminator: "island-1", wildcardLevels: 1 }

const serve = Effect.gen(function* () {
  const mqtt = yield* MqttConnection
  for (const filter of yield* Effect.fromResult(commandFilters(topics))) {
    const requests = yield* mqtt.subscribe(filter)
    yield* requests.pipe(
      Stream.runForEach((request) =>
        Effect.gen(function* () {
          if (Result.isFailure(request.decoded)) {
            // Bad input never stops the island: answer (if asked to) and acknowledge.
            const { kind, message } = request.decoded.failure
            yield* mqtt.reply(request, makeErrorReply({ source: "urn:island-1", type: "com.example.error.v1", kind, message }))
          } else {
            const command = request.decoded.success
            // claim the dedupe key, process, mark done ... then reply and acknowledge.
            yield* mqtt.reply(request, makeCloudEvent({ source: "urn:island-1", type: `${command.type}.reply`, data: { ReturnStatus: 1 } }))
          }
          yield* request.ack
        }).pipe(Effect.catch((error) => Effect.logWarning(`reply failed: ${error.message}`)))
      ),
      Effect.forkScoped
    )
  }
  const replies = yield* Effect.fromResult(responseTopic(topics, "instance-1"))
  yield* Effect.log(`serving; our own requests would get replies on ${replies}`)
  yield* Effect.never
})

// MQTT_URL, MQTT_USERNAME, ... are read and validated once, at start.
const MqttLive = Layer.unwrap(Effect.map(mqttOptionsConfig, MqttConnection.layer))

export const main = serve.pipe(Effect.scoped, Effect.provide(MqttLive))
