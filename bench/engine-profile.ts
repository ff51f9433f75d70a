/**
 * A scratch profile of the SFC engine's hot path (not part of `pnpm bench`): one engine, a
 * five-step linear recipe, an instant in-process station. Prints steps/s, event-to-dispatch
 * latency and the server's commands per step (INFO commandstats deltas, script-internal calls
 * included). Run it under `node --cpu-prof` for a CPU profile:
 *
 *   cd bench && node --cpu-prof --cpu-prof-dir=/tmp/prof --conditions=source --import tsx engine-profile.ts
 *
 * PROFILE_JOBS (default 200) jobs; PROFILE_ONE=1 submits one job at a time.
 */
import { Effect, Layer } from "effect"
import { Redis } from "iovalkey"
import { encodeJobOrderRecord, JobStates } from "@microdcs/job-state"
import { InProcessStation, RECIPE_SCHEMA_ID, SfcEngineProcesses, SfcRuntimeServices } from "@microdcs/sfc"
import { JobOrderDao, storeLayer, Valkey, WorkMasterDao } from "@microdcs/store"
import { randomPrefix, startValkeyServer } from "@microdcs/test-utils"
import { summarize } from "./Measure.js"

const JOBS = Number(process.env["PROFILE_JOBS"] ?? 200)
const ONE = process.env["PROFILE_ONE"] === "1"
const STEPS = 5

const workMaster = {
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

const commandStats = async (client: Redis): Promise<Map<string, number>> => {
  const text = await client.info("commandstats")
  const stats = new Map<string, number>()
  for (const line of text.split("\n")) {
    const match = /^cmdstat_([^:]+):calls=(\d+)/.exec(line.trim())
    if (match) stats.set(match[1]!, Number(match[2]))
  }
  return stats
}

const run = (url: string) =>
  Effect.gen(function* () {
    const prefix = randomPrefix("profile-engine")
    const lastReply = new Map<string, number>()
    const gaps: Array<number> = []
    const station = InProcessStation({
      onCommand: (command) => {
        const now = performance.now()
        const previous = lastReply.get(command.jobId)
        if (previous !== undefined) gaps.push(now - previous)
        lastReply.set(command.jobId, now)
        return {}
      }
    })
    const island = SfcEngineProcesses({ consumer: "engine-0", fallbackIntervalMs: 200, sweepIntervalMs: 500 }).pipe(
      Layer.provideMerge(station.layer),
      Layer.provideMerge(SfcRuntimeServices),
      Layer.provideMerge(storeLayer({ url, prefix, connectionName: "profile-engine" }))
    )
    const raw = new Redis(url)
    return yield* Effect.gen(function* () {
      const workMasters = yield* WorkMasterDao
      const jobOrders = yield* JobOrderDao
      const valkey = yield* Valkey
      yield* workMasters.put({ id: workMaster.ID, scope: "bench", doc: JSON.stringify(workMaster), expectedVersion: -1 })
      const completed = valkey.keys.key("jobResponseByState", { scope: "bench", state: "Ended_Completed" }) as string
      const untilCompleted = (n: number) =>
        Effect.gen(function* () {
          while ((yield* valkey.command("count", (c) => c.scard(completed))) < n) yield* Effect.sleep(ONE ? "1 millis" : "20 millis")
        })
      const before = yield* Effect.promise(() => commandStats(raw))
      const cpuBefore = process.cpuUsage()
      const start = performance.now()
      yield* Effect.forEach(
        Array.from({ length: JOBS }, (_, i) => i),
        (i) =>
          jobOrders
            .put({
              id: `job-${i}`, scope: "bench", priority: 1, expectedVersion: 0, change: "StoreAndStart",
              doc: encodeJobOrderRecord({ JobOrderID: `job-${i}`, WorkMasterID: [{ ID: workMaster.ID }] }, JobStates.AllowedToStart_Ready)
            })
            .pipe(Effect.zipRight(ONE ? untilCompleted(i + 1) : Effect.void)),
        { concurrency: ONE ? 1 : 16, discard: true }
      )
      yield* untilCompleted(JOBS)
      const seconds = (performance.now() - start) / 1000
      const cpu = process.cpuUsage(cpuBefore)
      const after = yield* Effect.promise(() => commandStats(raw))
      const deltas = [...after].map(([name, calls]) => [name, calls - (before.get(name) ?? 0)] as const).filter(([, d]) => d > 0)
      const total = deltas.reduce((sum, [, d]) => sum + d, 0)
      const steps = JOBS * STEPS
      const gap = summarize("gap", gaps)
      console.log(`${JOBS} jobs${ONE ? " one at a time" : " at once"}: ${(steps / seconds).toFixed(0)} steps/s, event to dispatch p50 ${gap.median.toFixed(3)} ms p99 ${gap.p99.toFixed(3)} ms`)
      console.log(`Node CPU per step (user + system, whole process incl. the station and the submitter): ${((cpu.user + cpu.system) / steps).toFixed(0)} µs`)
      console.log(`commands per step (server side, incl. polling and scripts' calls): ${(total / steps).toFixed(2)}`)
      const work = valkey.keys.key("sfcWork", { scope: "bench" }) as string
      yield* Effect.sleep("1 second")
      const pending = yield* Effect.promise(() => raw.call("XPENDING", work, "sfc-engine"))
      console.log(`work stream: ${yield* Effect.promise(() => raw.xlen(work))} entries, pending ${JSON.stringify(pending)}`)
      for (const [name, d] of deltas.sort((a, b) => b[1] - a[1])) console.log(`  ${name.padEnd(20)} ${(d / steps).toFixed(2)}`)
    }).pipe(Effect.provide(island), Effect.ensuring(Effect.promise(() => raw.quit())))
  })

const main = async () => {
  const external = process.env["BENCH_VALKEY_URL"]
  const server = external ? undefined : await startValkeyServer()
  try {
    await Effect.runPromise(Effect.scoped(run(external ?? server!.url)))
  } finally {
    await server?.stop()
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
