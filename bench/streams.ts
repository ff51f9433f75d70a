import { Deferred, Effect } from "effect"
import { scriptKeys, sfcCompareAndSet } from "@microdcs/lua-scripts"
import { makePoller } from "@microdcs/poller"
import { SfcStateDao, storeLayer, Valkey } from "@microdcs/store"
import { randomPrefix } from "@microdcs/test-utils"
import { rawClient } from "./RawClient.js"
import { latency, printLatencies, printThroughput, summarize, throughputOf, throughputOfEffect } from "./Measure.js"
import { IN_FLIGHT, SAMPLES, THROUGHPUT_OPS } from "./Settings.js"

const FALLBACK_MS = 1000

/** An execution state of realistic size (~2 KB). */
const stateDoc = (i: number) => JSON.stringify({ jobId: `job-${i}`, status: "running", pad: "x".repeat(2000) })

const program = Effect.gen(function* () {
  const valkey = yield* Valkey
  const states = yield* SfcStateDao
  // PING on the store's own connection (the spec's baseline); raw script calls on a plain client.
  const client = yield* valkey.command("client", async (c) => c)
  const plain = yield* rawClient(valkey.options.url!)
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
  yield* valkey.command("register", (c) => c.sadd(valkey.keys.key("scopes", {}) as string, "bench"))
  const samples: Array<number> = []
  for (let i = 0; i < opts.samples + 50; i++) {
    arrived = yield* Deferred.make<number>()
    const sent = performance.now()
    yield* valkey.command("append", (c) => c.multi().xadd(work, "*", "n", String(i)).publish(channel, "bench").exec())
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
