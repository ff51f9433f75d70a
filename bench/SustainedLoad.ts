/**
 * The sustained load of the MQTT suite (issue 11): StoreAndStart at BENCH_LOAD_RATE per second
 * for BENCH_LOAD_SECONDS into one island with its engine, end to end; with
 * BENCH_LOAD_STATION_DELAY_MS the station holds every command that long, so jobs pile up
 * running (rate × steps × delay at once), and the island's execution log drops are counted.
 */
import { fileURLToPath } from "node:url"
import { Effect, Fiber } from "effect"
import { type ExecutionLogStats, ExecutionLogWriter } from "@microdcs/sfc-runtime"
import { ChangeStream, storeLayer, WorkMasterDao } from "@microdcs/store"
import { randomPrefix } from "@microdcs/test-utils"
import { makeMes } from "./BenchMes.js"
import { forkChild, reap } from "./ChildProcess.js"
import { type Latency, summarize } from "./Measure.js"
import { LOAD_SCOPE as SCOPE, LOAD_STEPS, loadIsland, loadWorkMaster } from "./LoadIsland.js"
import type { FromLoadIsland, LoadIslandConfig, ToLoadIsland } from "./LoadIslandChild.js"

// StoreAndStart at a fixed rate for a while, with the engine running.
const LOAD_RATE = Number(process.env["BENCH_LOAD_RATE"] ?? 200)
export const LOAD_SECONDS = Number(process.env["BENCH_LOAD_SECONDS"] ?? 20)
/** How long the station holds each command (BENCH_LOAD_STATION_DELAY_MS, default 0: at once). */
const STATION_DELAY_MS = Math.max(0, Number(process.env["BENCH_LOAD_STATION_DELAY_MS"] ?? 0))
/** A job's own time: the station's hold of each of its steps. */
const JOB_HOLD_MS = LOAD_STEPS * STATION_DELAY_MS
/** The targets of the sustained load: the island's CPU per job order and the end-to-end p99 (plus the station's hold). */
const CPU_PER_JOB_TARGET_MS = 1
const END_TO_END_P99_TARGET_MS = 100

const fmt = (n: number, digits = 3) => n.toFixed(digits)

interface LoadFigures {
  readonly submitted: number
  readonly replied: number
  readonly completed: number
  readonly endToEnd: Latency
  readonly reply: Latency
  readonly seconds: number
  /** The island process's CPU over the measured load, µs; undefined when it shares this process. */
  readonly islandCpuMicros: number | undefined
  /** The island's execution log writer at the end (the writes it dropped, its slowest batch). */
  readonly log: ExecutionLogStats | undefined
}

/** BENCH_LOAD_IN_PROCESS=1: the island in this process, beside the load generator (as before). */
const LOAD_IN_PROCESS = process.env["BENCH_LOAD_IN_PROCESS"] === "1"
/** Seconds of unmeasured load first (BENCH_LOAD_WARMUP_SECONDS, default 2): the island's JIT warms up. */
const LOAD_WARMUP_SECONDS = Math.max(0, Number(process.env["BENCH_LOAD_WARMUP_SECONDS"] ?? 2))

const islandChildScript = fileURLToPath(new URL("./LoadIslandChild.ts", import.meta.url))

/** The load's island in a child process; `stop` ends it and waits for its exit. */
const startLoadIsland = (config: LoadIslandConfig) => {
  const { child, exited, message, tell } = forkChild<FromLoadIsland, ToLoadIsland>(islandChildScript, "load island", "BENCH_LOAD_ISLAND", config)
  return { ready: message("ready"), report: message("report"), stop: () => reap(child, exited, child.exitCode === null), tell }
}

/**
 * The sustained load (issue 11): StoreAndStart over MQTT at LOAD_RATE per second for LOAD_SECONDS,
 * open loop (each request is sent at its scheduled time, whatever the earlier ones are doing, and
 * timed from then), into one island with its engine and an instant in-process station, in a
 * process of its own (the MES is another system; BENCH_LOAD_IN_PROCESS=1 keeps it here). End to
 * end is the scheduled submission to the job order's Complete (Ended_Completed) in the scope's
 * change stream, polled every 5 ms. Warm-up load first, unmeasured.
 */
export const runLoad = (brokerUrl: string, valkeyUrl: string) =>
  Effect.gen(function* () {
    const prefix = randomPrefix("bench-load")
    const child = LOAD_IN_PROCESS ? undefined : startLoadIsland({ brokerUrl, valkeyUrl, prefix, stationDelayMs: STATION_DELAY_MS })
    yield* Effect.addFinalizer(() => Effect.promise(async () => child?.stop()))
    if (child) yield* Effect.promise(() => child.ready)
    const here = LOAD_IN_PROCESS ? loadIsland(brokerUrl, valkeyUrl, prefix, STATION_DELAY_MS) : storeLayer({ url: valkeyUrl, prefix, connectionName: "bench-load-mes" })
    return yield* Effect.gen(function* () {
      const workMasters = yield* WorkMasterDao
      const changes = yield* ChangeStream
      yield* workMasters.put({ id: loadWorkMaster.ID, scope: SCOPE, doc: JSON.stringify(loadWorkMaster), expectedVersion: -1 })
      const { call } = yield* makeMes(brokerUrl, prefix)
      const jobOrderOf = (id: string) => ({ JobOrder: { JobOrderID: id, Priority: 1, WorkMasterID: [{ ID: loadWorkMaster.ID }] } })
      /** Sends `count` StoreAndStarts at LOAD_RATE from `start`, each in a fiber of its own; `sent` sees each at its scheduled time. */
      const atRate = (count: number, start: number, name: (i: number) => string, sent: (id: string, at: number) => void, replied: (at: number) => void) =>
        Effect.forEach(Array.from({ length: count }, (_, i) => i), (i) =>
          Effect.gen(function* () {
            const at = start + (i * 1000) / LOAD_RATE
            const wait = at - performance.now()
            if (wait > 1) yield* Effect.sleep(`${Math.floor(wait)} millis`)
            const id = name(i)
            sent(id, at)
            return yield* call("StoreAndStart", jobOrderOf(id)).pipe(Effect.tap(() => Effect.sync(() => replied(at))), Effect.forkChild)
          })
        )
      // Unmeasured: the island's code is compiled by the JIT before the measured load.
      const warm = Math.round(LOAD_RATE * LOAD_WARMUP_SECONDS)
      if (warm > 0) {
        const warming = yield* atRate(warm, performance.now() + 50, (i) => `warm-${i}`, () => undefined, () => undefined)
        yield* Effect.forEach(warming, Fiber.join, { discard: true }).pipe(Effect.timeout("30 seconds"), Effect.ignore)
        yield* Effect.sleep("1 second")
      }
      const total = Math.max(1, Math.round(LOAD_RATE * LOAD_SECONDS))
      const scheduledAt = new Map<string, number>()
      const replyMs: Array<number> = []
      const endMs: Array<number> = []
      // The watcher: every job order that reached Ended_Completed, from the change stream.
      const watcher = yield* Effect.gen(function* () {
        let cursor = "0"
        while (endMs.length < total) {
          const page = yield* changes.read(SCOPE, { after: cursor, count: 1000 })
          const now = performance.now()
          for (const entry of page.entries) {
            const at = entry.kind === "joborder" && entry.change === "Complete" ? scheduledAt.get(entry.id) : undefined
            if (at !== undefined) endMs.push(now - at)
          }
          cursor = page.next
          if (page.entries.length < 1000) yield* Effect.sleep("5 millis")
        }
      }).pipe(Effect.forkChild)
      child?.tell({ type: "start" })
      const start = performance.now() + 50
      const senders = yield* atRate(total, start, (i) => `load-${i}`, (id, at) => void scheduledAt.set(id, at), (at) => void replyMs.push(performance.now() - at))
      // A request without a reply a minute after the last submission is counted as missing: a
      // broker whose queue for the island overflowed (mosquitto keeps 1000 per client) drops the
      // rest, and waiting longer would hang the run.
      yield* Effect.forEach(senders, Fiber.join, { discard: true }).pipe(Effect.timeout("60 seconds"), Effect.ignore)
      yield* Effect.forEach(senders, Fiber.interrupt, { discard: true })
      yield* Fiber.join(watcher).pipe(Effect.timeout(30_000 + JOB_HOLD_MS), Effect.ignore)
      yield* Fiber.interrupt(watcher)
      const seconds = (performance.now() - start) / 1000
      child?.tell({ type: "stop" })
      const report = child ? yield* Effect.promise(() => child.report) : undefined
      const inProcess = yield* Effect.serviceOption(ExecutionLogWriter)
      return {
        submitted: total,
        replied: replyMs.length,
        completed: endMs.length,
        endToEnd: summarize(`end to end (StoreAndStart → Ended_Completed)`, endMs),
        reply: summarize(`StoreAndStart, request → reply`, replyMs),
        seconds,
        islandCpuMicros: report?.cpuMicros,
        log: report?.log ?? (inProcess._tag === "Some" ? inProcess.value.stats() : undefined)
      } satisfies LoadFigures
    }).pipe(Effect.provide(here))
  }).pipe(Effect.scoped)

export const printLoad = (load: LoadFigures) => {
  console.log(
    `\nSustained load: StoreAndStart over MQTT at ${LOAD_RATE}/s for ${LOAD_SECONDS} s (BENCH_LOAD_RATE, BENCH_LOAD_SECONDS), ` +
      `one island with its engine, ${LOAD_STEPS}-step recipe, ` +
      (STATION_DELAY_MS > 0 ? `a station that holds each command ${STATION_DELAY_MS} ms (about ${Math.round((LOAD_RATE * JOB_HOLD_MS) / 1000)} jobs running), ` : "instant in-process station, ") +
      (LOAD_IN_PROCESS ? "in the load generator's process" : "in a process of its own") +
      (LOAD_WARMUP_SECONDS > 0 ? `, after ${LOAD_WARMUP_SECONDS} s of unmeasured load` : "")
  )
  console.log(`  ${"operation".padEnd(48)} ${"p50 ms".padStart(9)} ${"p99 ms".padStart(9)}  target`)
  for (const row of [load.reply, load.endToEnd]) {
    // The station's hold is the job's own time, not the island's.
    const bound = END_TO_END_P99_TARGET_MS + JOB_HOLD_MS
    const target = row === load.endToEnd ? `p99 ≤ ${bound} ${row.p99 <= bound && load.completed === load.submitted ? "ok" : "MISSED"}` : ""
    console.log(`  ${row.name.padEnd(48)} ${fmt(row.median, 1).padStart(9)} ${fmt(row.p99, 1).padStart(9)}  ${target}`)
  }
  console.log(`  replies ${load.replied}, completed ${load.completed} of ${load.submitted} job orders`)
  if (load.islandCpuMicros !== undefined) {
    console.log(
      `  island process CPU: ${(load.islandCpuMicros / load.submitted / 1000).toFixed(2)} ms per job order, ` +
        `${((load.islandCpuMicros / 1e6 / load.seconds) * 100).toFixed(0)} % of one core ` +
        `(target ≤ ${CPU_PER_JOB_TARGET_MS} ms ${load.islandCpuMicros / load.submitted / 1000 <= CPU_PER_JOB_TARGET_MS ? "ok" : "MISSED"})`
    )
  }
  if (load.log !== undefined) {
    const { written, dropped, batches, slowestBatchMs, removed, retentionFailures, queueSize } = load.log
    console.log(
      `  execution log: ${written} writes in ${batches} batches, ${dropped} dropped (goal 0 ${dropped === 0 ? "ok" : "MISSED"}), ` +
        `slowest batch ${slowestBatchMs.toFixed(0)} ms (dropped past 5000), queue ${queueSize}, ` +
        `retention removed ${removed} executions${retentionFailures > 0 ? `, ${retentionFailures} retention runs failed` : ""}`
    )
  }
}
