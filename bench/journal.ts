import { Context, Effect, Layer } from "effect"
import {
  decodeEntry,
  decodePlainMessagePack,
  encodeEntry,
  encodePlainMessagePack,
  FieldTable,
  Journal,
  type JournalEvent,
  JournalOptions
} from "@microdcs/journal"
import { Valkey, ValkeyLayer } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { randomPrefix } from "@microdcs/test-utils"
import { latency, printLatencies, throughputOf, throughputOfEffect } from "./Measure.js"
import { rawClient } from "./RawClient.js"
import { IN_FLIGHT, SAMPLES, THROUGHPUT_OPS } from "./Settings.js"

/**
 * The event journal (issue 12): inserts through the journal against raw pipelined HSET+ZADD of
 * the same bytes, recall of the newest 20 and a counter read against PING, and the bytes per
 * entry of each encoding with its cost, on realistic station events.
 */

const scope = "bench-line"
const journalConfig = {
  name: "station",
  types: ["com.example.station.torque.v1", "com.example.station.qa.v1", "com.example.job.result.v1"],
  searchKeys: [
    { name: "tool", path: "data.tool_id" },
    { name: "job", path: "jobid" },
    { name: "equipment", path: "subject" }
  ],
  retention: { maxAge: "7d", reference: "arrival" },
  compression: "none",
  counters: [
    { name: "results_1h", searchKey: "tool", window: "1h", resolution: "minute" },
    { name: "torque_sum_1d", searchKey: "tool", window: "1d", resolution: "hour", sum: "data.torque" }
  ]
}

/** Station events as a station reports them: torque readings, QA checks and job results. */
export const stationEvent = (i: number): JournalEvent => {
  const base = {
    specversion: "1.0",
    id: `evt-${i}-${Math.random().toString(36).slice(2, 10)}`,
    source: "urn:plant-a:line-1:cell-4",
    time: new Date().toISOString(),
    subject: `cell-${i % 8}`,
    jobid: `job-${Math.floor(i / 20)}`,
    datacontenttype: "application/json"
  }
  switch (i % 3) {
    case 0:
      return {
        ...base,
        type: "com.example.station.torque.v1",
        data: {
          tool_id: `nutrunner-${i % 12}`, program: 12, step: 3, torque: 24.5 + (i % 7) / 10, angle: 182.3 + (i % 11),
          result: i % 17 === 0 ? "NOK" : "OK", limits: { torqueMin: 22, torqueMax: 27, angleMin: 160, angleMax: 200 },
          serial: `SN-${String(100000 + i)}`, bolt: { position: i % 6, diameter: "M8", grade: "10.9" }
        }
      }
    case 1:
      return {
        ...base,
        type: "com.example.station.qa.v1",
        data: {
          tool_id: `camera-${i % 4}`, check: "weld-seam", result: i % 23 === 0 ? "NOK" : "OK", score: 0.93 + (i % 5) / 100,
          operator: "operator-12", measurements: [{ name: "width", value: 4.1, unit: "mm" }, { name: "depth", value: 1.9, unit: "mm" }]
        }
      }
    default:
      return {
        ...base,
        type: "com.example.job.result.v1",
        data: {
          tool_id: `station-${i % 3}`, JobOrderID: base.jobid, State: "Ended_Completed", StartTime: base.time, EndTime: base.time,
          ActualMaterial: [{ MaterialDefinitionID: "axle-front-a2", Quantity: 1, Unit: "pcs" }],
          Results: [{ Name: "torque_ok", Value: true }, { Name: "cycle_time_s", Value: 41.7 }]
        }
      }
  }
}

const perEntry = (name: string, events: ReadonlyArray<JournalEvent>, encode: (e: JournalEvent) => Buffer, decode: (b: Buffer) => unknown) => {
  const encoded = events.map(encode)
  const rounds = 5
  let start = performance.now()
  for (let r = 0; r < rounds; r++) for (const e of events) encode(e)
  const encodeUs = ((performance.now() - start) * 1000) / (rounds * events.length)
  start = performance.now()
  for (let r = 0; r < rounds; r++) for (const b of encoded) decode(b)
  const decodeUs = ((performance.now() - start) * 1000) / (rounds * events.length)
  const bytes = encoded.reduce((n, b) => n + b.length, 0) / encoded.length
  return { name, bytes, encodeUs, decodeUs }
}

const encodings = () => {
  const events = Array.from({ length: 3000 }, (_, i) => stationEvent(i))
  const table = new FieldTable()
  // The table a journal holds after its first entries: every field name has its integer.
  for (const e of events.slice(0, 3)) for (const name of encodeEntry(e, table, "none").newFields) table.learn(name, table.size + 1)
  const rows = [
    perEntry("JSON", events, (e) => Buffer.from(JSON.stringify(e)), (b) => JSON.parse(b.toString("utf8"))),
    perEntry("MessagePack (field names)", events, encodePlainMessagePack, decodePlainMessagePack),
    perEntry("MessagePack, indexed fields", events, (e) => encodeEntry(e, table, "none").bytes, (b) => decodeEntry(b, table)),
    perEntry("MessagePack, indexed fields + LZ4", events, (e) => encodeEntry(e, table, "lz4").bytes, (b) => decodeEntry(b, table))
  ]
  const json = rows[0]!.bytes
  console.log(`  ${"encoding (3000 station events)".padEnd(40)} ${"bytes/entry".padStart(12)} ${"vs JSON".padStart(8)} ${"encode µs".padStart(10)} ${"decode µs".padStart(10)}`)
  for (const r of rows) {
    console.log(
      `  ${r.name.padEnd(40)} ${r.bytes.toFixed(0).padStart(12)} ${`${((r.bytes / json) * 100).toFixed(0)}%`.padStart(8)} ${r.encodeUs.toFixed(1).padStart(10)} ${r.decodeUs.toFixed(1).padStart(10)}`
    )
  }
}

const program = (uncached: Journal["Service"]) => Effect.gen(function* () {
  const valkey = yield* Valkey
  const journal = yield* Journal
  const opts = { warmup: 200, samples: SAMPLES }
  const client = yield* unsafeCommand(valkey, "client", async (c) => c)
  const plain = yield* rawClient(valkey.options.url!)
  yield* journal.configure(scope, journalConfig)

  console.log(`\njournal: ${THROUGHPUT_OPS} inserts with ${IN_FLIGHT} in flight, then ${SAMPLES} sequential round trips each (median, p99)`)
  // The raw baseline writes the same encoded bytes: one HSET of the payload and one ZADD, pipelined.
  const table = new FieldTable()
  const sample = Array.from({ length: 1000 }, (_, i) => encodeEntry(stationEvent(i), table, "none").bytes)
  const rawPayload = `${valkey.keys.prefix}:raw:payload`
  const rawIndex = `${valkey.keys.prefix}:raw:index`
  const rawInsert = (i: number) => plain.pipeline().hset(rawPayload, `e-${i}`, sample[i % sample.length]!).zadd(rawIndex, Date.now(), `e-${i}`).exec()
  yield* Effect.promise(() => throughputOf(2000, IN_FLIGHT, rawInsert))
  const raw = yield* Effect.promise(() => throughputOf(THROUGHPUT_OPS, IN_FLIGHT, rawInsert))
  const events = Array.from({ length: THROUGHPUT_OPS + 2000 }, (_, i) => stationEvent(i))
  yield* throughputOfEffect(2000, IN_FLIGHT, (i) => journal.insert(scope, "station", events[THROUGHPUT_OPS + i]!))
  const ours = yield* throughputOfEffect(THROUGHPUT_OPS, IN_FLIGHT, (i) => journal.insert(scope, "station", events[i]!))
  const share = ours / raw
  console.log(`  ${"inserts/s, raw pipelined HSET+ZADD of the same bytes".padEnd(52)} ${raw.toFixed(0).padStart(10)}`)
  console.log(
    `  ${"inserts/s, through the journal (3 indexes, 2 counters)".padEnd(52)} ${ours.toFixed(0).padStart(10)} ${`${(share * 100).toFixed(0)}%`.padStart(8)}  ` +
      `of raw, target ≥ 50% ${share >= 0.5 ? "ok" : "MISSED"}`
  )

  const ping = yield* latency("PING (raw, same connection)", opts, () => Effect.promise(() => client.ping()))
  const recall = yield* latency("recall newest 20 (cache warm)", opts, (i) => journal.recall(scope, "station", "tool", `nutrunner-${i % 12}`, { limit: 20 }))
  const counter = yield* latency("counter read (1h, minute buckets)", opts, (i) => journal.counter(scope, "station", "results_1h", `nutrunner-${i % 12}`))
  yield* uncached.reload()
  const cold = yield* latency("recall newest 20 (no cache, one script)", opts, (i) => uncached.recall(scope, "station", "tool", `nutrunner-${i % 12}`, { limit: 20 }))
  printLatencies(ping, [{ ...recall, target: 3.0 }, cold, { ...counter, target: 1.5 }])

  encodings()
})

export const runJournalBench = (url: string) =>
  Effect.gen(function* () {
    const valkeyLayer = ValkeyLayer.layer({ url, prefix: randomPrefix("bench-journal") })
    const cached = yield* Layer.build(Journal.Default.pipe(Layer.provideMerge(valkeyLayer)))
    // A second process's journal without a cache: its recall brings the payloads in the one script.
    const uncached = yield* Layer.build(Journal.Default.pipe(Layer.provide(JournalOptions.layer({ cacheBytes: 0 })), Layer.provide(valkeyLayer)))
    yield* program(Context.get(uncached, Journal)).pipe(Effect.provide(cached))
  }).pipe(Effect.scoped, Effect.runPromise)
