import { Effect, Exit, Layer, Scope, ExecutionStrategy, Fiber } from "effect"
import { MqttConnection } from "@microdcs/cloudevents-mqtt"
import { startMosquitto } from "@microdcs/embedded"
const broker = await startMosquitto()
const mode = process.argv[2]
const prog = Effect.gen(function* () {
  const scope = yield* Scope.make()
  const mqtt = MqttConnection.layer({ url: broker.url, clientId: "exp-1", clean: false, sessionExpirySeconds: 60 })
  if (mode === "close") {
    yield* Layer.buildWithScope(mqtt, scope)
    yield* Scope.close(scope, Exit.void)
  } else {
    const f = yield* Effect.fork(Layer.buildWithScope(mqtt, scope))
    yield* Effect.sleep(Number(mode))
    yield* Fiber.interrupt(f)
    yield* Scope.close(scope, Exit.void)
  }
  yield* Effect.sleep("3 seconds")
})
await Effect.runPromise(prog)
const out = (broker.process as any)
await broker.stop()
process.exit(0)
