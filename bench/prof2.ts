import { Effect, Layer } from "effect"
import { JobOrderDao, ValkeyLayer } from "@microdcs/store"
import { startValkeyServer, randomPrefix } from "@microdcs/test-utils"
import { throughputOfEffect } from "./Measure.js"
import { jobOrderDoc } from "./store.js"
const server = await startValkeyServer()
await Effect.gen(function* () {
  const dao = yield* JobOrderDao
  for (let r = 0; r < 3; r++) {
    const tp = yield* throughputOfEffect(20000, 64, (i) => dao.put({ id: `tp-${i % 1000}`, scope: "s", doc: jobOrderDoc(`tp-${i}`), priority: 1, expectedVersion: -1 }))
    console.log("dao puts/s", tp.toFixed(0))
  }
}).pipe(Effect.provide(JobOrderDao.Default.pipe(Layer.provideMerge(ValkeyLayer.layer({ url: server.url, prefix: randomPrefix() })))), Effect.runPromise)
await server.stop()
