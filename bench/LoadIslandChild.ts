/**
 * The island of the sustained load in a process of its own (started by mqtt.ts with
 * `node --import tsx --conditions=source`): ingress, engine and station on the given prefix. It
 * tells "ready" once it listens, measures its CPU between "start" and "stop" and reports it.
 */
import { Context, Effect, Layer, Queue } from "effect"
import { type ExecutionLogStats, ExecutionLogWriter } from "@microdcs/sfc-runtime"
import { loadIsland } from "./LoadIsland.js"

export interface LoadIslandConfig {
  readonly brokerUrl: string
  readonly valkeyUrl: string
  readonly prefix: string
  readonly stationDelayMs: number
}
export type ToLoadIsland = { readonly type: "start" } | { readonly type: "stop" }
export type FromLoadIsland = { readonly type: "ready" } | { readonly type: "report"; readonly cpuMicros: number; readonly log: ExecutionLogStats }

const config = JSON.parse(process.env["BENCH_LOAD_ISLAND"] ?? "{}") as LoadIslandConfig
const tell = (message: FromLoadIsland) => process.send?.(message)
// Ended by SIGTERM: an orderly exit, so a CPU profile (BENCH_CHILD_PROF) is written.
process.on("SIGTERM", () => process.exit(0))

// Messages are queued from the first moment, so none is lost between two waits.
const inbox = Effect.runSync(Queue.unbounded<ToLoadIsland>())
process.on("message", (message: ToLoadIsland) => Queue.offerUnsafe(inbox, message))
const next = (type: ToLoadIsland["type"]): Effect.Effect<void> =>
  Effect.flatMap(Queue.take(inbox), (message) => (message.type === type ? Effect.void : next(type)))

const program = Effect.gen(function* () {
  const island = yield* Layer.build(loadIsland(config.brokerUrl, config.valkeyUrl, config.prefix, config.stationDelayMs))
  tell({ type: "ready" })
  yield* next("start")
  const cpu = process.cpuUsage()
  yield* next("stop")
  const used = process.cpuUsage(cpu)
  tell({ type: "report", cpuMicros: used.user + used.system, log: Context.get(island, ExecutionLogWriter).stats() })
}).pipe(Effect.scoped)

Effect.runPromise(program).then(
  () => process.exit(0),
  (error) => {
    console.error("load island failed:", error)
    process.exit(1)
  }
)
