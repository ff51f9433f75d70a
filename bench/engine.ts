import { Effect, Layer } from "effect"
import { encodeJobOrderRecord, JobStates } from "@microdcs/job-state"
import { InProcessStation, RECIPE_SCHEMA_ID, SfcEngineProcesses, SfcRuntimeServices } from "@microdcs/sfc"
import { JobOrderDao, storeLayer, Valkey, WorkMasterDao } from "@microdcs/store"
import { randomPrefix } from "@microdcs/test-utils"
import { latency, printLatencies, summarize, type Latency } from "./Measure.js"

const JOBS = Number(process.env["BENCH_JOBS"] ?? 200)
const STEPS = 5

/** A five-step linear recipe: one push command per step. */
const linearWorkMaster = {
  ID: "wm-linear-5",
  dataschema: RECIPE_SCHEMA_ID,
  data: {
    Steps: Array.from({ length: STEPS }, (_, i) => ({ Name: `S${i}`, ...(i === 0 ? { Initial: true } : {}) })),
    Transitions: Array.from({ length: STEPS - 1 }, (_, i) => ({ Source: `S${i}`, Target: `S${i + 1}`, Condition: "true" })),
    Actions: Array.from({ length: STEPS }, (_, i) => ({
      Name: `a${i}`, Step: `S${i}`, Qualifier: "N", Interaction: "push_command", TypeId: `bench.step${i}.v1`, TimeoutSeconds: 60
    }))
  }
}

interface EngineRun {
  readonly jobsPerSecond: number
  readonly actionsPerSecond: number
  readonly eventToDispatch: Latency
}

/** One island with `engines` engine instances; submits JOBS job orders and waits for every response. */
const runIsland = (url: string, engines: number, mode: { readonly jobs: number; readonly oneAtATime: boolean } = { jobs: JOBS, oneAtATime: false }) =>
  Effect.gen(function* () {
    const prefix = randomPrefix("bench-engine")
    const lastReply = new Map<string, number>()
    const gaps: Array<number> = []
    // The instant station: answers at once; the gap between answering one step's command and
    // receiving the next step's command is the event-to-next-dispatch latency.
    const onCommand = (command: { jobId: string }) => {
      const now = performance.now()
      const previous = lastReply.get(command.jobId)
      if (previous !== undefined) gaps.push(now - previous)
      lastReply.set(command.jobId, now)
      return {}
    }
    const island = (n: number) => {
      const store = storeLayer({ url, prefix, connectionName: `bench-engine-${n}` })
      const station = InProcessStation({ onCommand })
      return SfcEngineProcesses({ consumer: `engine-${n}`, fallbackIntervalMs: 200, sweepIntervalMs: 500 }).pipe(
        Layer.provideMerge(station.layer),
        Layer.provideMerge(SfcRuntimeServices),
        Layer.provideMerge(store)
      )
    }
    const instances = engines === 1 ? island(0) : Layer.merge(island(0), island(1))
    return yield* Effect.gen(function* () {
      const workMasters = yield* WorkMasterDao
      const jobOrders = yield* JobOrderDao
      yield* workMasters.put({ id: linearWorkMaster.ID, scope: "bench", doc: JSON.stringify(linearWorkMaster), expectedVersion: -1 })
      const valkey = yield* Valkey
      const completed = valkey.keys.key("jobResponseByState", { scope: "bench", state: "Ended_Completed" }) as string
      const untilCompleted = (n: number) =>
        Effect.gen(function* () {
          while ((yield* valkey.command("count", (c) => c.scard(completed))) < n) yield* Effect.sleep(mode.oneAtATime ? "1 millis" : "20 millis")
        })
      const start = performance.now()
      yield* Effect.forEach(
        Array.from({ length: mode.jobs }, (_, i) => i),
        (i) =>
          jobOrders
            .put({
              id: `job-${i}`, scope: "bench", priority: 1, expectedVersion: 0, change: "StoreAndStart",
              doc: encodeJobOrderRecord({ JobOrderID: `job-${i}`, WorkMasterID: [{ ID: linearWorkMaster.ID }] }, JobStates.AllowedToStart_Ready)
            })
            .pipe(Effect.zipRight(mode.oneAtATime ? untilCompleted(i + 1) : Effect.void)),
        { concurrency: mode.oneAtATime ? 1 : 16, discard: true }
      )
      yield* untilCompleted(mode.jobs)
      const seconds = (performance.now() - start) / 1000
      const label = mode.oneAtATime ? "one job at a time" : `${engines} engine${engines > 1 ? "s" : ""}, ${mode.jobs} jobs at once`
      return {
        jobsPerSecond: mode.jobs / seconds,
        actionsPerSecond: (mode.jobs * STEPS) / seconds,
        eventToDispatch: summarize(`event to next dispatch (${label})`, gaps)
      } satisfies EngineRun
    }).pipe(Effect.provide(instances))
  })

export const runEngineBench = (url: string) =>
  Effect.gen(function* () {
    const ping = yield* Effect.flatMap(Valkey, (valkey) =>
      Effect.flatMap(valkey.command("client", async (c) => c), (client) =>
        latency("PING (raw, same connection)", { warmup: 100, samples: 1000 }, () => Effect.promise(() => client.ping()))
      )
    ).pipe(Effect.provide(storeLayer({ url, prefix: randomPrefix("bench") })))
    const idle = yield* runIsland(url, 1, { jobs: 20, oneAtATime: true })
    const one = yield* runIsland(url, 1)
    const two = yield* runIsland(url, 2)
    console.log(`\nSFC engine: ${JOBS} jobs of a ${STEPS}-step linear recipe against an instant in-process station`)
    printLatencies(ping, [idle.eventToDispatch, one.eventToDispatch, two.eventToDispatch])
    for (const [label, run] of [["1 engine", one], ["2 engines", two]] as const) {
      console.log(`  ${`jobs/s, ${label}`.padEnd(52)} ${run.jobsPerSecond.toFixed(1).padStart(10)}`)
      console.log(`  ${`action completions/s, ${label}`.padEnd(52)} ${run.actionsPerSecond.toFixed(1).padStart(10)}`)
    }
  }).pipe(Effect.scoped, Effect.runPromise)
