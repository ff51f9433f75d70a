import { Effect, Layer } from "effect"
import { MqttConnection, mqttOptionsConfig } from "@microdcs/cloudevents-mqtt"
import { storeLayer, valkeyOptionsConfig } from "@microdcs/store"
import { Publisher, PublisherLive } from "@microdcs/publisher"

// The README's example, type-checked with the package (not run as a test).
const PublisherLayer = PublisherLive({ prefix: "microdcs", discriminator: "island-1", source: "urn:microdcs:island-1" }).pipe(
  Layer.provide(Layer.unwrap(Effect.map(mqttOptionsConfig, MqttConnection.layer))),
  Layer.provide(Layer.unwrap(Effect.map(valkeyOptionsConfig, storeLayer)))
)

const report = Effect.gen(function* () {
  const publisher = yield* Publisher
  const { active, published, deleted, batches } = yield* publisher.stats
  yield* Effect.logInfo(`publisher ${publisher.instanceId}: ${active ? "active" : "standby"}, ${published} published, ${deleted} deleted, ${batches} batches`)
})

export const main = Effect.forever(report.pipe(Effect.andThen(Effect.sleep("10 seconds")))).pipe(Effect.provide(PublisherLayer))
