import { Effect, Result, Layer } from "effect"
import { putJobOrder } from "@microdcs/lua-scripts"
import {
  DedupeStore,
  JobOrderDao,
  JobResponseDao,
  Valkey,
  ValkeyLayer
} from "@microdcs/store"
import { jobOrderSearchFacts } from "@microdcs/store/testing"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { randomPrefix } from "@microdcs/test-utils"
import { rawClient } from "./RawClient.js"
import { latency, printLatencies, printThroughput, throughputOf, throughputOfEffect } from "./Measure.js"
import { SAMPLES, THROUGHPUT_OPS, IN_FLIGHT } from "./Settings.js"

/** A job order of realistic size (~1 KB). */
export const jobOrderDoc = (id: string) =>
  JSON.stringify({
    JobOrderID: id,
    Description: "Front axle, order 4711 ".repeat(8),
    Priority: 5,
    WorkMasterID: [{ ID: "wm-axle-v1" }],
    EquipmentRequirements: [{ ID: "station-7" }],
    MaterialRequirements: [{ MaterialClassID: "axle", MaterialDefinitionID: "axle-front-a2", Quantity: 1 }],
    PersonnelRequirements: [{ ID: "operator-12" }],
    PhysicalAssetRequirements: [{ ID: "nutrunner-3" }],
    State: [{ StateText: { Text: "NotAllowedToStart", Locale: "en" }, StateNumber: 1 }]
  })

const program = Effect.gen(function* () {
  const valkey = yield* Valkey
  const jobOrders = yield* JobOrderDao
  const jobResponses = yield* JobResponseDao
  const dedupe = yield* DedupeStore
  const scope = "bench-line"
  const opts = { warmup: 200, samples: SAMPLES }
  // PING on the store's own connection (the baseline); raw script calls on a plain client.
  const client = yield* unsafeCommand(valkey, "client", async (c) => c)
  const plain = yield* rawClient(valkey.options.url!)

  // Data for the reads: 2000 responses, 300 of them in one state.
  yield* Effect.forEach(
    Array.from({ length: 2000 }, (_, i) => i),
    (i) =>
      jobResponses.put({
        id: `jr-${i}`, scope, orderId: `jo-${i}`, state: i < 300 ? "Ended_Completed" : "Running",
        startTime: Date.now(), doc: JSON.stringify({ ID: `jr-${i}`, JobOrderID: `jo-${i}` }), expectedVersion: -1
      }),
    { concurrency: 32, discard: true }
  )

  // The same script as raw iovalkey EVALSHA calls, for the latency and throughput comparisons.
  const docKey = (i: number) => valkey.keys.key("jobOrder", { id: `tp-${i % 1000}` }) as string
  const listKey = valkey.keys.key("jobOrderList", { scope }) as string
  const scopesKey = valkey.keys.key("scopes", {}) as string
  const changesKey = valkey.keys.key("changes", { scope }) as string
  const channel = valkey.keys.key("nudge", { kind: "changes" }) as string
  const searchKey = valkey.keys.key("jobOrderSearch", { scope }) as string
  const responsesKey = (i: number) => valkey.keys.key("jobResponseOfOrder", { orderId: `tp-${i % 1000}` }) as string
  const failedKey = valkey.keys.key("jobResponseFailed", { scope }) as string
  yield* Effect.promise(() => plain.script("LOAD", putJobOrder.source))
  // The search facts the store passes with each put (the same for every bench document).
  const facts = jobOrderSearchFacts(jobOrderDoc("tp-0"))
  const rawPut = (i: number) =>
    plain.evalsha(putJobOrder.sha1, putJobOrder.numberOfKeys, docKey(i), listKey, scopesKey, changesKey, searchKey, responsesKey(i), failedKey,
      ...putJobOrder.encodeArgs({
        expectedVersion: -1, scope, id: `tp-${i % 1000}`, priority: 1, doc: jobOrderDoc(`tp-${i}`),
        op: `op-${i}`, change: "put", nudgeChannel: channel, limit: 0, retainMs: 0, origin: "", facts
      }))

  console.log(`\nstore: ${SAMPLES} sequential round trips each (median, p99), then ${THROUGHPUT_OPS} puts with ${IN_FLIGHT} in flight`)
  const ping = yield* latency("PING (raw, same connection)", opts, () => Effect.promise(() => client.ping()))
  const rawScript = yield* latency("job order put, raw EVALSHA (plain client)", opts, (i) => Effect.promise(() => rawPut(i)))
  const put = yield* latency("document put (JobOrderDao.put)", opts, (i) =>
    jobOrders.put({ id: `jo-${i % 500}`, scope, doc: jobOrderDoc(`jo-${i % 500}`), priority: i % 10, expectedVersion: -1 })
  )
  const responsePut = yield* latency("job response put (read + script)", opts, (i) =>
    jobResponses.put({
      id: `jr-${i % 2000}`, scope, orderId: `jo-${i % 2000}`, state: i % 2000 < 300 ? "Ended_Completed" : "Running",
      startTime: 1, doc: JSON.stringify({ ID: `jr-${i % 2000}` }), expectedVersion: -1
    })
  )
  const byOrder = yield* latency("find by order id", opts, (i) => jobResponses.byOrder(`jo-${i % 2000}`))
  const byState = yield* latency("by-state page of 100", opts, () => jobResponses.byState(scope, "Ended_Completed", "0", 100))
  const claim = yield* latency("dedupe claim", opts, (i) => dedupe.claim("urn:bench", `evt-${i}`, "token", 30_000))
  printLatencies(ping, [
    rawScript,
    { ...put, target: 2.0 },
    responsePut,
    { ...byOrder, target: 1.3 },
    { ...byState, target: 3.0 },
    claim
  ])

  yield* Effect.promise(() => throughputOf(2000, IN_FLIGHT, rawPut))
  const raw = yield* Effect.promise(() => throughputOf(THROUGHPUT_OPS, IN_FLIGHT, rawPut))
  const viaDao = yield* throughputOfEffect(THROUGHPUT_OPS, IN_FLIGHT, (i) =>
    jobOrders.put({ id: `tp-${i % 1000}`, scope, doc: jobOrderDoc(`tp-${i}`), priority: 1, expectedVersion: -1 })
  )
  printThroughput("puts/s", raw, viaDao, 0.7)
  // The explicit batch: JobOrderDao.putMany, two batches of half the in-flight count at a time,
  // so as many puts are outstanding as above. Every outcome must be a write.
  const half = IN_FLIGHT / 2
  const batchedStart = performance.now()
  yield* Effect.forEach(
    Array.from({ length: Math.ceil(THROUGHPUT_OPS / half) }, (_, b) => b),
    (b) =>
      jobOrders
        .putMany(Array.from({ length: half }, (_, k) => {
          const i = b * half + k
          return { id: `tp-${i % 1000}`, scope, doc: jobOrderDoc(`tp-${i}`), priority: 1, expectedVersion: -1 }
        }))
        .pipe(Effect.flatMap((outcomes) => (outcomes.every(Result.isSuccess) ? Effect.void : Effect.die(new Error("a batched put failed"))))),
    { concurrency: 2, discard: true }
  )
  const viaBatch = (Math.ceil(THROUGHPUT_OPS / half) * half) / ((performance.now() - batchedStart) / 1000)
  printThroughput("puts/s in putMany batches", raw, viaBatch, 0.7)
})

export const runStoreBench = (url: string) =>
  program.pipe(
    Effect.scoped,
    Effect.provide(
      Layer.mergeAll(JobOrderDao.Default, JobResponseDao.Default, DedupeStore.Default).pipe(
        Layer.provideMerge(ValkeyLayer.layer({ url, prefix: randomPrefix("bench") }))
      )
    ),
    Effect.runPromise
  )
