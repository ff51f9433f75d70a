import { Effect, Layer } from "effect"
import { putJobOrder } from "@microdcs/lua-scripts"
import { JobOrderDao, Valkey, ValkeyLayer } from "@microdcs/store"
import { randomPrefix } from "@microdcs/test-utils"
import { latency, printLatencies, throughputOf, throughputOfEffect } from "./Measure.js"

const SAMPLES = Number(process.env["BENCH_SAMPLES"] ?? 2000)
const THROUGHPUT_OPS = Number(process.env["BENCH_THROUGHPUT_OPS"] ?? 20000)
const IN_FLIGHT = 64

/** A job order of realistic size (~1 KB). */
const jobOrderDoc = (id: string) =>
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

export const runStoreBench = (url: string) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const jobOrders = yield* JobOrderDao
    const scope = "bench-line"
    const opts = { warmup: 200, samples: SAMPLES }
    const client = yield* valkey.command("client", async (c) => c)

    // Throughput: the same script, once through the DAO (Effect, validation, error mapping) and
    // once as raw iovalkey EVALSHA calls with identical arguments.
    const docKey = (i: number) => valkey.keys.key("jobOrder", { id: `tp-${i % 1000}` }) as string
    const listKey = valkey.keys.key("jobOrderList", { scope }) as string
    const scopesKey = valkey.keys.key("scopes", {}) as string
    const changesKey = valkey.keys.key("changes", { scope }) as string
    const channel = valkey.keys.key("nudge", { kind: "changes" }) as string
    const rawPut = (i: number) =>
      client.evalsha(putJobOrder.sha1, putJobOrder.numberOfKeys, docKey(i), listKey, scopesKey, changesKey,
        ...putJobOrder.encodeArgs({
          expectedVersion: -1, scope, id: `tp-${i % 1000}`, priority: 1, doc: jobOrderDoc(`tp-${i}`),
          op: `op-${i}`, change: "put", nudgeChannel: channel, limit: 0, retainMs: 0
        }))
    console.log(`\nstore: ${SAMPLES} sequential round trips each, then ${THROUGHPUT_OPS} puts with ${IN_FLIGHT} in flight`)
    const ping = yield* latency("PING (raw, same connection)", opts, () => Effect.promise(() => client.ping()))
    const put = yield* latency("job order put", opts, (i) =>
      jobOrders.put({ id: `jo-${i % 500}`, scope, doc: jobOrderDoc(`jo-${i % 500}`), priority: i % 10, expectedVersion: -1 })
    )
    const rawScript = yield* latency("job order put, raw EVALSHA", opts, (i) => Effect.promise(() => rawPut(i)))
    printLatencies(ping, [rawScript, { ...put, target: 2.0 }])

    yield* Effect.promise(() => client.script("LOAD", putJobOrder.source))
    const daoPut = (i: number) =>
      jobOrders.put({ id: `tp-${i % 1000}`, scope, doc: jobOrderDoc(`tp-${i}`), priority: 1, expectedVersion: -1 })
    yield* Effect.promise(() => throughputOf(2000, IN_FLIGHT, rawPut))
    const raw = yield* Effect.promise(() => throughputOf(THROUGHPUT_OPS, IN_FLIGHT, rawPut))
    const viaDao = yield* throughputOfEffect(THROUGHPUT_OPS, IN_FLIGHT, daoPut)
    const share = viaDao / raw
    console.log(`  ${"puts/s, raw iovalkey EVALSHA".padEnd(34)} ${raw.toFixed(0).padStart(10)}`)
    console.log(`  ${"puts/s, JobOrderDao.put".padEnd(34)} ${viaDao.toFixed(0).padStart(10)} ${(share * 100).toFixed(0).padStart(8)}% of raw  target ≥ 70% ${share >= 0.7 ? "ok" : "MISSED"}`)
  }).pipe(
    Effect.provide(JobOrderDao.Default.pipe(Layer.provideMerge(ValkeyLayer.layer({ url, prefix: randomPrefix("bench") })))),
    Effect.runPromise
  )
