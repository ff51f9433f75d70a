import { Effect, Layer } from "effect"
import { JobOrderDao, Valkey, ValkeyLayer } from "@microdcs/store"
import { putJobOrder } from "@microdcs/lua-scripts"
import { startValkeyServer, randomPrefix } from "@microdcs/test-utils"
import { throughputOf, throughputOfEffect } from "./Measure.js"
import { jobOrderDoc } from "./store.js"
const server = await startValkeyServer()
const mode = process.argv[2]
await Effect.gen(function* () {
  const dao = yield* JobOrderDao
  const valkey = yield* Valkey
  const client = yield* valkey.command("c", async (c) => c)
  yield* Effect.promise(() => client.script("LOAD", putJobOrder.source))
  const k = (f: any, p: any) => valkey.keys.key(f, p) as string
  const rawPut = (i: number) => client.evalsha(putJobOrder.sha1, 4, k("jobOrder", { id: `tp-${i % 1000}` }), k("jobOrderList", { scope: "s" }), k("scopes", {}), k("changes", { scope: "s" }),
    ...putJobOrder.encodeArgs({ expectedVersion: -1, scope: "s", id: `tp-${i % 1000}`, priority: 1, doc: jobOrderDoc(`tp-${i}`), op: `op-${i}`, change: "put", nudgeChannel: "x", limit: 0, retainMs: 0 }))
  for (let r = 0; r < 3; r++) {
    const tp = mode === "raw" ? yield* Effect.promise(() => throughputOf(10000, 64, rawPut))
      : mode === "effraw" ? yield* throughputOfEffect(10000, 64, (i) => Effect.promise(() => rawPut(i)))
      : mode === "cmd" ? yield* throughputOfEffect(10000, 64, (i) => valkey.command("x", () => rawPut(i)))
      : yield* throughputOfEffect(10000, 64, (i) => dao.put({ id: `tp-${i % 1000}`, scope: "s", doc: jobOrderDoc(`tp-${i}`), priority: 1, expectedVersion: -1 }))
    console.log(mode, "puts/s", tp.toFixed(0))
  }
}).pipe(Effect.provide(JobOrderDao.Default.pipe(Layer.provideMerge(ValkeyLayer.layer({ url: server.url, prefix: randomPrefix() })))), Effect.runPromise)
await server.stop()
