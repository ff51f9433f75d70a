/**
 * One engine process of a multi-process island (started by EngineProcesses.ts with
 * `node --import tsx --conditions=source`): the SFC runtime and its own instant in-process
 * station on the island's prefix. It measures its own CPU and sent commands between the parent's
 * "start" and "stop" and reports them with the steps its station answered.
 */
import { Effect, Layer, Queue } from "effect"
import { Redis } from "iovalkey"
import type { EngineChildConfig, FromChild, ToChild } from "./ChildMessages.js"
import { engineInstance } from "./EngineIsland.js"
import { countSendsOf, sentCommands } from "./SentCommands.js"
import { StepLog } from "./StepLog.js"

const config = JSON.parse(process.env["BENCH_ENGINE_CHILD"] ?? "{}") as EngineChildConfig
const tell = (message: FromChild) => process.send?.(message)

// Messages are queued from the first moment, so none is lost between two waits.
const inbox = Effect.runSync(Queue.unbounded<ToChild>())
process.on("message", (message: ToChild) => Queue.offerUnsafe(inbox, message))
const next = (type: ToChild["type"]): Effect.Effect<void> =>
  Effect.flatMap(Queue.take(inbox), (message) => (message.type === type ? Effect.void : next(type)))

const program = Effect.gen(function* () {
  countSendsOf(Redis.prototype)
  const steps = new StepLog()
  yield* Layer.build(engineInstance({ url: config.url, prefix: config.prefix, consumer: config.consumer, steps }))
  tell({ type: "ready" })
  yield* next("start")
  steps.times.length = 0
  const sent = sentCommands()
  const cpu = process.cpuUsage()
  yield* next("stop")
  const used = process.cpuUsage(cpu)
  tell({ type: "report", cpuMicros: used.user + used.system, sent: sentCommands() - sent, steps: steps.times })
}).pipe(Effect.scoped)

Effect.runPromise(program).then(
  () => process.exit(0),
  (error) => {
    console.error(`engine child ${config.consumer} failed:`, error)
    process.exit(1)
  }
)
