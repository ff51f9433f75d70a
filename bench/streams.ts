import { Deferred, Effect } from "effect"
import { Redis } from "iovalkey"
import { scriptKeys, sfcCompareAndSet } from "@microdcs/lua-scripts"
import { makePoller, type PollerOptions } from "@microdcs/poller"
import { SfcStateDao, storeLayer, Valkey } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { randomPrefix } from "@microdcs/test-utils"
import { rawClient } from "./RawClient.js"
import { latency, printLatencies, printThroughput, summarize, throughputOf, throughputOfEffect } from "./Measure.js"
import { IN_FLIGHT, SAMPLES, THROUGHPUT_OPS } from "./Settings.js"

const FALLBACK_MS = 1000

/** An execution state of realistic size (~2 KB). */
const stateDoc = (i: number) => JSON.stringify({ jobId: `job-${i}`, status: "running", pad: "x".repeat(2000) })

/** Entries per consumption run, runs per mode (the median is printed), and the read size of every mode. */
const CONSUME_ENTRIES = THROUGHPUT_OPS
const CONSUME_RUNS = Number(process.env["BENCH_CONSUME_RUNS"] ?? 3)
const CONSUME_BATCH = 32 // the poller's default batchSize (2 × concurrency 16)
/** Entries of the nudged runs: each is appended and nudged alone, and handled before the next (a round per entry). */
const NUDGED_ENTRIES = Number(process.env["BENCH_CONSUME_NUDGED"] ?? 1000)

interface ConsumeRun {
  readonly perSecond: number
  /** Node CPU (user + system, this process) per entry, µs. */
  readonly cpuPerEntryUs: number
}

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/** Fills a stream with `n` small entries (the SFC work entry's shape), pipelined; not measured. */
const fill = (client: Redis, stream: string, group: string, n: number) =>
  Effect.promise(async () => {
    await client.call("XGROUP", "CREATE", stream, group, "0", "MKSTREAM")
    for (let i = 0; i < n; i += 1000) {
      const p = client.pipeline()
      for (let j = i; j < Math.min(n, i + 1000); j++) p.xadd(stream, "*", "type", "command", "jobId", `job-${j}`, "entry", "{}")
      await p.exec()
    }
  })

/** Wall time and Node CPU of `consume`, which returns once all `n` entries are handled and acknowledged. */
const measured = <E, R>(n: number, consume: Effect.Effect<void, E, R>): Effect.Effect<ConsumeRun, E, R> =>
  Effect.gen(function* () {
    const cpu0 = process.cpuUsage()
    const t0 = performance.now()
    yield* consume
    const wall = performance.now() - t0
    const cpu = process.cpuUsage(cpu0)
    return { perSecond: n / (wall / 1000), cpuPerEntryUs: (cpu.user + cpu.system) / n }
  })

/** The baseline: a plain iovalkey loop of XREADGROUP COUNT 32 and one XACK per read, until the stream is drained. */
const rawConsume = (client: Redis, stream: string, group: string) =>
  Effect.promise(async () => {
    for (;;) {
      const reply = (await client.xreadgroup("GROUP", group, "raw", "COUNT", CONSUME_BATCH, "STREAMS", stream, ">")) as
        | Array<[string, Array<[string, Array<string>]>]>
        | null
      const entries = reply?.[0]?.[1] ?? []
      if (entries.length > 0) await client.xack(stream, group, ...entries.map((e) => e[0]))
      if (entries.length < CONSUME_BATCH) return
    }
  })

/** Appends one entry and publishes its nudge in one MULTI, as the SFC CAS script does. */
const appendAndNudge = (client: Redis, stream: string, channel: string, scope: string, i: number) =>
  client.multi().xadd(stream, "*", "type", "command", "jobId", `job-${i}`, "entry", "{}").publish(channel, scope).exec()

/**
 * The nudged baseline: a plain subscriber whose message handler runs XREADGROUP and one XACK, so
 * a round per entry costs what the poller's round cannot avoid (the nudge, a read, an ack).
 */
const rawNudged = (client: Redis, url: string, stream: string, group: string, channel: string, n: number) =>
  Effect.promise(async () => {
    const subscriber = new Redis(url)
    const reader = new Redis(url)
    await subscriber.subscribe(channel)
    let handled: () => void = () => undefined
    subscriber.on("message", async () => {
      const reply = (await reader.xreadgroup("GROUP", group, "raw", "COUNT", CONSUME_BATCH, "STREAMS", stream, ">")) as
        | Array<[string, Array<[string, Array<string>]>]>
        | null
      const entries = reply?.[0]?.[1] ?? []
      if (entries.length > 0) await reader.xack(stream, group, ...entries.map((e) => e[0]))
      handled()
    })
    const cpu0 = process.cpuUsage()
    const t0 = performance.now()
    for (let i = 0; i < n; i++) {
      const done = new Promise<void>((resolve) => (handled = resolve))
      await appendAndNudge(client, stream, channel, "raw", i)
      await done
    }
    const wall = performance.now() - t0
    const cpu = process.cpuUsage(cpu0)
    subscriber.disconnect()
    reader.disconnect()
    return { perSecond: n / (wall / 1000), cpuPerEntryUs: (cpu.user + cpu.system) / n } satisfies ConsumeRun
  })

/**
 * Nudged consumption, one entry at a time: append and nudge, wait until the handler saw it, next.
 * Each entry is a round of its own (wake, read, handle, ack), as in an engine that is not busy.
 * The poller is started and warmed up on the scope before the measurement.
 */
const nudgedConsumption = (plain: Redis) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const runs: Record<"raw" | "entry" | "batch", Array<ConsumeRun>> = { raw: [], entry: [], batch: [] }
    const n = NUDGED_ENTRIES
    for (let r = 0; r < CONSUME_RUNS; r++) {
      for (const mode of ["raw", "entry", "batch"] as const) {
        const scope = `nudged-${mode}-${r}`
        const stream = valkey.keys.key("sfcWork", { scope }) as string
        const group = `nudged-${r}`
        yield* Effect.promise(() => plain.call("XGROUP", "CREATE", stream, group, "$", "MKSTREAM"))
        if (mode === "raw") {
          const channel = valkey.keys.key("nudge", { kind: "bench-raw" }) as string
          runs.raw.push(yield* rawNudged(plain, valkey.options.url!, stream, group, channel, n))
          continue
        }
        const channel = valkey.keys.key("nudge", { kind: `bench-${mode}` }) as string
        let seen = yield* Deferred.make<void>()
        const common = { kind: `bench-${mode}`, stream: "sfcWork", group, fallbackIntervalMs: 60_000, trimIntervalMs: 0 } as const
        const options: PollerOptions<never, never> =
          mode === "entry"
            ? { ...common, handler: () => Effect.asVoid(Deferred.succeed(seen, undefined)) }
            : { ...common, handleBatch: () => Effect.asVoid(Deferred.succeed(seen, undefined)) }
        const run = Effect.gen(function* () {
          const poller = yield* makePoller(options)
          // Discovered (its group is there already) and warmed up before the measurement.
          yield* poller.wake(scope)
          for (let i = 0; i < 50; i++) {
            seen = yield* Deferred.make<void>()
            yield* Effect.promise(() => appendAndNudge(plain, stream, channel, scope, i))
            yield* Deferred.await(seen)
          }
          const cpu0 = process.cpuUsage()
          const t0 = performance.now()
          for (let i = 0; i < n; i++) {
            seen = yield* Deferred.make<void>()
            yield* Effect.promise(() => appendAndNudge(plain, stream, channel, scope, i))
            yield* Deferred.await(seen)
          }
          const wall = performance.now() - t0
          const cpu = process.cpuUsage(cpu0)
          return { perSecond: n / (wall / 1000), cpuPerEntryUs: (cpu.user + cpu.system) / n } satisfies ConsumeRun
        }).pipe(Effect.scoped)
        runs[mode].push(yield* run)
      }
    }
    printConsumption(`poller nudged consumption: ${n} entries, each appended, nudged and handled before the next, no-op handler, median of ${CONSUME_RUNS} runs`, runs, {
      raw: "raw subscriber: XREADGROUP + XACK per nudge",
      entry: "poller, per-entry handler",
      batch: "poller, batch handler (handleBatch)"
    })
  })

/** One table of consumption figures: entries/s, Node CPU per entry and its ratio to the raw mode's. */
const printConsumption = (
  title: string,
  runs: Record<"raw" | "entry" | "batch", ReadonlyArray<ConsumeRun>>,
  labels: Record<"raw" | "entry" | "batch", string>
) => {
  const raw = median(runs.raw.map((x) => x.cpuPerEntryUs))
  console.log(`\n${title}`)
  console.log(`  ${"mode".padEnd(52)} ${"entries/s".padStart(10)} ${"CPU µs/entry".padStart(12)} ${"× raw".padStart(8)}`)
  for (const mode of ["raw", "entry", "batch"] as const) {
    const perSecond = median(runs[mode].map((x) => x.perSecond))
    const cpu = median(runs[mode].map((x) => x.cpuPerEntryUs))
    console.log(`  ${labels[mode].padEnd(52)} ${perSecond.toFixed(0).padStart(10)} ${cpu.toFixed(1).padStart(12)} ${(cpu / raw).toFixed(2).padStart(8)}`)
  }
}

/**
 * Consumption of one stream with a no-op handler, per mode: the raw loop, the poller's per-entry
 * handler and its batch handler, each on a fresh stream and group, `CONSUME_RUNS` times.
 */
const consumption = (plain: Redis) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const runs: Record<"raw" | "entry" | "batch", Array<ConsumeRun>> = { raw: [], entry: [], batch: [] }
    const n = CONSUME_ENTRIES
    for (let r = 0; r < CONSUME_RUNS; r++) {
      for (const mode of ["raw", "entry", "batch"] as const) {
        const scope = `consume-${mode}-${r}`
        const stream = valkey.keys.key("sfcWork", { scope }) as string
        const group = `consume-${r}`
        yield* fill(plain, stream, group, n)
        if (mode === "raw") {
          runs.raw.push(yield* measured(n, rawConsume(plain, stream, group)))
          continue
        }
        const done = yield* Deferred.make<void>()
        let handled = 0
        const common = {
          kind: "bench",
          stream: "sfcWork",
          group,
          batchSize: CONSUME_BATCH,
          fallbackIntervalMs: 60_000,
          trimIntervalMs: 0
        } as const
        const options: PollerOptions<never, never> =
          mode === "entry"
            ? { ...common, handler: () => Effect.suspend(() => (++handled === n ? Deferred.succeed(done, undefined) : Effect.void)) }
            : // asVoid: a batch handler's value is its outcome, and `true` would fail the whole last batch.
              { ...common, handleBatch: (es) => Effect.suspend(() => ((handled += es.length) === n ? Effect.asVoid(Deferred.succeed(done, undefined)) : Effect.void)) }
        // The scope is not registered: `wake` discovers it, so no other poller of this run reads it.
        const run = Effect.gen(function* () {
          const poller = yield* makePoller(options)
          yield* poller.wake(scope)
          yield* Deferred.await(done)
          // The last batch's XACK follows its handler: wait until the group holds nothing pending.
          const pending = unsafeCommand(valkey, "xpending", (c) => c.xpending(stream, group) as Promise<[number, ...Array<unknown>]>)
          while ((yield* pending)[0] > 0) yield* Effect.sleep(1)
        }).pipe(Effect.scoped)
        runs[mode].push(yield* measured(n, run))
      }
    }
    printConsumption(`poller consumption: ${n} entries, no-op handler, reads of ${CONSUME_BATCH}, median of ${CONSUME_RUNS} runs`, runs, {
      raw: "raw iovalkey XREADGROUP + XACK per read",
      entry: "poller, per-entry handler",
      batch: "poller, batch handler (handleBatch)"
    })
  })

const program = Effect.gen(function* () {
  const valkey = yield* Valkey
  const states = yield* SfcStateDao
  // PING on the store's own connection (the baseline); raw script calls on a plain client.
  const client = yield* unsafeCommand(valkey, "client", async (c) => c)
  const plain = yield* rawClient(valkey.options.url!)
  // BENCH_STREAMS=consume runs only the consumption figures.
  yield* consumption(plain)
  yield* nudgedConsumption(plain)
  if (process.env["BENCH_STREAMS"] === "consume") return
  const opts = { warmup: 100, samples: Math.min(SAMPLES, 1000) }
  const ping = yield* latency("PING (raw, same connection)", opts, () => Effect.promise(() => client.ping()))

  // Nudge to handler: append + publish, then wait for the poller's handler to see the entry.
  let arrived: Deferred.Deferred<number> | undefined
  yield* makePoller({
    kind: "sfc",
    stream: "sfcWork",
    group: "bench",
    fallbackIntervalMs: FALLBACK_MS,
    handler: () => (arrived ? Deferred.succeed(arrived, performance.now()) : Effect.void)
  })
  const work = valkey.keys.key("sfcWork", { scope: "bench" }) as string
  const channel = valkey.keys.key("nudge", { kind: "sfc" }) as string
  yield* unsafeCommand(valkey, "register", (c) => c.sadd(valkey.keys.key("scopes", {}) as string, "bench"))
  const samples: Array<number> = []
  for (let i = 0; i < opts.samples + 50; i++) {
    arrived = yield* Deferred.make<number>()
    const sent = performance.now()
    yield* unsafeCommand(valkey, "append", (c) => c.multi().xadd(work, "*", "n", String(i)).publish(channel, "bench").exec())
    const at = yield* Deferred.await(arrived)
    if (i >= 50) samples.push(at - sent)
  }
  const nudge = summarize("nudge to handler", samples)

  // CAS throughput: 64 jobs, each updated back to back by its own worker.
  const jobs = IN_FLIGHT
  const versions = Array.from({ length: jobs }, () => 0)
  const casArgs = (i: number, expectedVersion: number) => ({
    jobId: `job-${i}`, scope: "bench", expectedVersion, doc: stateDoc(i), op: `op-${i}-${expectedVersion}`,
    entries: [{ type: "command", jobId: `job-${i}`, entry: "{}" }], due: Date.now() + 60_000, active: true,
    waitsAdd: [], waitsRemove: []
  })
  const viaDao = yield* throughputOfEffect(THROUGHPUT_OPS, IN_FLIGHT, (n) => {
    const i = n % jobs
    return states.compareAndSet(casArgs(i, versions[i]!)).pipe(
      Effect.tap((w) => Effect.sync(() => (versions[i] = w.version))),
      Effect.catchTag("VersionConflict", () => Effect.void)
    )
  })
  const rawVersions = Array.from({ length: jobs }, () => 0)
  const keysOf = (i: number) => ({
    state: valkey.keys.key("sfcState", { jobId: `raw-${i}` }) as string,
    work: valkey.keys.key("sfcWork", { scope: "bench-raw" }) as string,
    due: valkey.keys.key("sfcDue", { scope: "bench-raw" }) as string,
    active: valkey.keys.key("sfcActive", { scope: "bench-raw" }) as string
  })
  const rawCas = async (n: number) => {
    const i = n % jobs
    const args = {
      expectedVersion: rawVersions[i]!, scope: "bench-raw", jobId: `raw-${i}`, op: `op-${n}`, doc: stateDoc(i),
      due: Date.now() + 60_000, active: true, nudgeChannel: channel, event: null, waitsJoin: [], waitsLeave: [],
      entries: [[["type", "command"], ["jobId", `raw-${i}`], ["entry", "{}"]] as const]
    }
    const keys = scriptKeys(sfcCompareAndSet, keysOf(i), args)
    const reply = (await plain.evalsha(sfcCompareAndSet.sha1, keys.length, ...keys, ...sfcCompareAndSet.encodeArgs(args))) as Array<unknown>
    if (reply[0] === "ok") rawVersions[i] = Number(reply[1])
  }
  yield* Effect.promise(() => plain.script("LOAD", sfcCompareAndSet.source))
  const raw = yield* Effect.promise(() => throughputOf(THROUGHPUT_OPS, IN_FLIGHT, rawCas))

  console.log(`\nstreams and poller: nudge-to-handler over ${samples.length} entries (fallback interval ${FALLBACK_MS} ms); SFC CAS with ${IN_FLIGHT} in flight`)
  printLatencies(ping, [nudge])
  console.log(`  ${"fallback interval".padEnd(52)} ${FALLBACK_MS.toFixed(3).padStart(10)}`)
  printThroughput("SFC CAS/s", raw, viaDao, 0.7)
})

export const runStreamsBench = (url: string) =>
  program.pipe(Effect.scoped, Effect.provide(storeLayer({ url, prefix: randomPrefix("bench") })), Effect.runPromise)
