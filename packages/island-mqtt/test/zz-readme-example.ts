// The README's example, kept here so the type check covers it (not a test file: nothing runs it).
import { Effect, Layer } from "effect"
import { MqttConnection } from "@microdcs/cloudevents-mqtt"
import { jobControlLayer } from "@microdcs/job-control"
import { SfcEngineProcesses, SfcRuntimeServices } from "@microdcs/sfc-runtime"
import { storeLayer } from "@microdcs/store"
import { JobControlIngress, MqttStation } from "@microdcs/island-mqtt"

const topics = { prefix: "microdcs", discriminator: "island-1", wildcardLevels: 1 }
const source = "urn:microdcs:island-1"

const island = Layer.mergeAll(
  JobControlIngress({ topics, source, sharedGroup: "island-1", concurrency: 32 }),
  SfcEngineProcesses()
).pipe(
  Layer.provide(MqttStation({ topics, instanceId: "instance-a", source })),
  Layer.provide(Layer.merge(jobControlLayer(), SfcRuntimeServices)),
  // A stable client id with a session expiry: what was not acknowledged comes back after a restart.
  Layer.provide(
    MqttConnection.layer({
      url: "mqtt://127.0.0.1:1883",
      clientId: "island-1-instance-a",
      clean: false,
      sessionExpirySeconds: 3600,
      receiveMaximum: 64
    })
  ),
  Layer.provide(storeLayer({ url: "redis://127.0.0.1:6379", prefix: "island-1" }))
)

export const main = () => Effect.runFork(Layer.launch(island))
