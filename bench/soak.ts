import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer } from "effect"
import { makeSimulatedStation } from "@microdcs/island-mqtt"
import { storeLayer, WorkMasterDao } from "@microdcs/store"
import { randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { runDaemon } from "./DaemonRun.js"
import { LOAD_SCOPE, loadWorkMaster } from "./LoadIsland.js"
import { makeMes } from "./BenchMes.js"

/**
 * `pnpm bench -- soak`: the island daemon's memory under a steady load. The daemon (default
 * roles, the storage role on its embedded PGlite) runs as a process of its own against this
 * run's Valkey and a mosquitto; an MES sends StoreAndStart at `BENCH_SOAK_RATE` (20) per second
 * for `BENCH_SOAK_SECONDS` (600) of a five-step recipe a simulated station answers at once. Every
 * 10 s the daemon's resident set (`microdcs_process_resident_memory_bytes` of its `/metrics`) is
 * read; printed: a line a minute, the RSS after the first minute (the warm-up: JIT, caches,
 * PGlite's buffers) and at the end, and the growth per job order between them.
 * `BENCH_SOAK_PG_DATA_DIR=memory://` keeps the archive in memory, as the embedded default did;
 * `BENCH_SOAK_ROLES=-storage` runs the daemon without the storage role, for a baseline.
 */

const RATE = Number(process.env["BENCH_SOAK_RATE"] ?? 20)
const SECONDS = Number(process.env["BENCH_SOAK_SECONDS"] ?? 600)
/**
 * An MES clears a job once it has its result; this one clears each job order `BENCH_SOAK_CLEAR_AFTER_S`
 * (30) seconds after sending it (long after the five quick steps ended). 0: never, and every
 * job stays in its scope's list and state index, which then grow with the run by design.
 */
const CLEAR_AFTER_S = Number(process.env["BENCH_SOAK_CLEAR_AFTER_S"] ?? 30)
/** Start-up (JIT, caches, PGlite's first checkpoints) peaks and settles within two minutes. */
const WARMUP_SECONDS = Math.min(120, Math.floor(SECONDS / 4))

const rssOf = (metrics: string) => Number(/^microdcs_process_resident_memory_bytes (\d+)/m.exec(metrics)?.[1] ?? Number.NaN)
/** The main thread's V8 heap: what of the RSS is not the embedded database's thread (nor native memory). */
const heapOf = (metrics: string) => Number(/^microdcs_nodejs_heap_size_used_bytes (\d+)/m.exec(metrics)?.[1] ?? Number.NaN)
/** Least-squares slope of `y` over `x`: the trend, not two samples' luck with the GC. */
const slope = (points: ReadonlyArray<readonly [number, number]>): number => {
  const n = points.length
  const mx = points.reduce((a, [x]) => a + x, 0) / n
  const my = points.reduce((a, [, y]) => a + y, 0) / n
  const sxx = points.reduce((a, [x]) => a + (x - mx) ** 2, 0)
  return sxx === 0 ? 0 : points.reduce((a, [x, y]) => a + (x - mx) * (y - my), 0) / sxx
}
/** Memory V8 knows of outside its heap on the main thread: Buffers and other ArrayBuffers. */
const externalOf = (metrics: string) => Number(/^microdcs_nodejs_external_memory_bytes (\d+)/m.exec(metrics)?.[1] ?? Number.NaN)
/** glibc's malloc settings (`MALLOC_ARENA_MAX`, `MALLOC_TRIM_THRESHOLD_`, …) reach the daemon, to compare allocators' behaviour. */
const mallocSettings = (): Record<string, string> =>
  Object.fromEntries(Object.entries(process.env).filter((entry): entry is [string, string] => entry[0].startsWith("MALLOC_") && entry[1] !== undefined))
/** `BENCH_SOAK_NODE_OPTIONS` becomes the daemon's `NODE_OPTIONS` (`--heapsnapshot-signal=SIGUSR2` to look inside it). */
const nodeOptions = (): Record<string, string> =>
  process.env["BENCH_SOAK_NODE_OPTIONS"] === undefined ? {} : { NODE_OPTIONS: process.env["BENCH_SOAK_NODE_OPTIONS"] }
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`

const waitForStorage = async (get: (path: string) => Promise<{ readonly status: number; readonly body: string }>, storage: boolean) => {
  for (const deadline = Date.now() + 180_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 200))) {
    const ready = await get("/readyz").catch(() => undefined)
    if (ready?.status === 200 && (!storage || ready.body.includes('"storage":{"ok":true}'))) return
  }
  throw new Error("the daemon's storage did not come up within 180 s")
}

/** StoreAndStart at RATE for SECONDS; `sample` every 10 s with the job orders sent so far. */
const load = (valkeyUrl: string, brokerUrl: string, prefix: string, sample: (sent: number) => Promise<void>, replied: () => void) =>
  Effect.gen(function* () {
    yield* Effect.flatMap(WorkMasterDao, (dao) => dao.put({ id: loadWorkMaster.ID, scope: LOAD_SCOPE, doc: JSON.stringify(loadWorkMaster), expectedVersion: -1 }))
    yield* makeSimulatedStation({ url: brokerUrl, topics: { prefix }, source: "urn:bench:soak-station", onCommand: () => ({ data: {} }) })
    const { call } = yield* makeMes(brokerUrl, prefix)
    const start = performance.now()
    let sent = 0
    let nextSample = 0
    while (performance.now() - start < SECONDS * 1000) {
      const due = Math.floor(((performance.now() - start) / 1000) * RATE)
      for (; sent < due; sent++) {
        yield* Effect.forkScoped(call("StoreAndStart", { JobOrder: { JobOrderID: `soak-${sent}`, Priority: 1, WorkMasterID: [{ ID: loadWorkMaster.ID }] } }).pipe(Effect.tap(() => Effect.sync(replied)), Effect.exit))
        const done = sent - RATE * CLEAR_AFTER_S
        if (CLEAR_AFTER_S > 0 && done >= 0) yield* Effect.forkScoped(Effect.exit(call("Clear", { JobOrderID: `soak-${done}` })))
      }
      if (performance.now() - start >= nextSample * 10_000) {
        yield* Effect.promise(() => sample(sent))
        nextSample++
      }
      yield* Effect.sleep("20 millis")
    }
    yield* Effect.promise(() => sample(sent))
  }).pipe(Effect.scoped, Effect.provide(Layer.orDie(storeLayer({ url: valkeyUrl, prefix }))))

export const runSoakBench = async (valkeyUrl: string): Promise<void> => {
  const broker = await startMosquitto()
  const dir = mkdtempSync(join(tmpdir(), "bench-soak-"))
  const prefix = randomPrefix("bench-soak")
  const dataDir = process.env["BENCH_SOAK_PG_DATA_DIR"] ?? join(dir, "archive")
  const roles: Record<string, string> = process.env["BENCH_SOAK_ROLES"] === undefined ? {} : { ISLAND_ROLES: process.env["BENCH_SOAK_ROLES"] }
  const daemon = runDaemon({ VALKEY_URL: valkeyUrl, MQTT_URL: broker.url, VALKEY_PREFIX: prefix, MQTT_TOPIC_PREFIX: prefix, ISLAND_INSTANCE_ID: "bench-soak", PG_DATA_DIR: dataDir, LOG_LEVEL: "info", ...roles, ...mallocSettings(), ...nodeOptions() })
  console.log(`\n== soak: StoreAndStart at ${RATE}/s for ${SECONDS} s into the daemon (roles ${roles["ISLAND_ROLES"] ?? "all"}, ${CLEAR_AFTER_S > 0 ? `each cleared ${CLEAR_AFTER_S} s later` : "none cleared"}, PG_DATA_DIR ${dataDir}${Object.keys(mallocSettings()).length > 0 ? `, ${JSON.stringify(mallocSettings())}` : ""}); its RSS ==`)
  const samples: Array<{ readonly at: number; readonly sent: number; readonly rss: number; readonly heap: number; readonly external: number }> = []
  let replies = 0
  try {
    await waitForStorage(daemon.get, roles["ISLAND_ROLES"] === undefined || !roles["ISLAND_ROLES"].includes("-storage"))
    const started = performance.now()
    await Effect.runPromise(
      load(valkeyUrl, broker.url, prefix, async (sent) => {
        const at = (performance.now() - started) / 1000
        const metrics = (await daemon.get("/metrics")).body
        samples.push({ at, sent, rss: rssOf(metrics), heap: heapOf(metrics), external: externalOf(metrics) })
        const last = samples.at(-1)!
        if (samples.length % 6 === 1) console.log(`  ${at.toFixed(0).padStart(5)} s  ${String(sent).padStart(7)} job orders  RSS ${mb(last.rss)}  main-thread heap ${mb(last.heap)}, external ${mb(last.external)}`)
      }, () => void replies++)
    )
    const warm = samples.find((s) => s.at >= WARMUP_SECONDS) ?? samples[0]!
    const end = samples.at(-1)!
    const settled = samples.filter((s) => s.at >= warm.at)
    const perJob = slope(settled.map((s) => [s.sent, s.rss] as const))
    const heapPerJob = slope(settled.map((s) => [s.sent, s.heap] as const))
    const rssRange = settled.map((s) => s.rss)
    const committed = /^microdcs_execution_log_committed_total (\d+)/m.exec((await daemon.get("/metrics")).body)?.[1] ?? "?"
    console.log(`${replies} of ${end.sent} StoreAndStart answered OK; ${committed} execution log values committed to the archive`)
    console.log(`RSS after ${warm.at.toFixed(0)} s (warm): ${mb(warm.rss)}; at the end (${end.at.toFixed(0)} s, ${end.sent} job orders): ${mb(end.rss)}; between them ${mb(Math.min(...rssRange))} to ${mb(Math.max(...rssRange))}`)
    console.log(`RSS trend after the warm-up (least squares over ${settled.length} samples): ${(perJob / 1024).toFixed(2)} KB per job order, ${mb(perJob * RATE * 3600)} an hour at ${RATE}/s; main-thread heap ${(heapPerJob / 1024).toFixed(2)} KB per job order`)
    // V8 grows its heap to a working size for minutes; the second half shows what is left after that.
    const lateHalf = samples.filter((s) => s.at >= SECONDS / 2)
    const latePerJob = slope(lateHalf.map((s) => [s.sent, s.rss] as const))
    console.log(`RSS trend over the second half (${lateHalf.length} samples): ${(latePerJob / 1024).toFixed(2)} KB per job order, ${mb(latePerJob * RATE * 3600)} an hour`)
  } finally {
    await daemon.stop()
    await broker.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}
