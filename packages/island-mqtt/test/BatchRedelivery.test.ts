import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { MethodEventTypes, ReturnStatus } from "@microdcs/job-state"
import { ChangeStream } from "@microdcs/store"
import { randomPrefix } from "@microdcs/test-utils"
import { mosquittoForFile } from "@microdcs/testkit"
import { eventually, ingressLayer, jobOrderState, makeMes, SCOPE, startInstance, storeFor } from "./Kit.js"

/**
 * Exactly once when redeliveries come in bursts (issue 11): many requests, each sent several
 * times at once, so copies of one request are handled concurrently by the ingress's workers (one
 * holds the claim while the others are held or find it done). Each job order is written once and
 * every copy is answered with the first reply.
 */

const broker = mosquittoForFile()

const REQUESTS = 30
const COPIES = 3

describe("JobControlIngress under bursts of redeliveries", () => {
  it.live("every request is applied once, and every copy gets the first reply", () => {
    const prefix = randomPrefix("burst")
    return Effect.gen(function* () {
      yield* startInstance(
        ingressLayer(broker.url, prefix, { ingress: { concurrency: 16 } }).pipe(Layer.provide(storeFor(prefix)))
      )
      const mes = yield* makeMes(broker.url, prefix)
      const requests = Array.from({ length: REQUESTS }, (_, i) =>
        mes.request(MethodEventTypes.StoreAndStart, { JobOrder: { JobOrderID: `burst-${i}`, Priority: 1 } })
      )
      // Copy k of every request, then copy k + 1: the copies of one request are in flight together.
      const sends = Array.from({ length: COPIES }, () => requests).flat()
      const correlations = yield* Effect.forEach(sends, (request) => mes.send(request), { concurrency: "unbounded" })
      const replies = yield* Effect.forEach(correlations, (id) => mes.replyTo(id), { concurrency: "unbounded" })

      for (let i = 0; i < REQUESTS; i++) {
        const copies = Array.from({ length: COPIES }, (_, k) => replies[k * REQUESTS + i]!)
        // The same reply event every time: the one kept with the done mark.
        expect(new Set(copies.map((reply) => reply.id)).size).toBe(1)
        for (const reply of copies) {
          expect(reply.data).toEqual({ ReturnStatus: ReturnStatus.NO_ERROR, JobOrderID: `burst-${i}` })
          expect(reply.extensions["causationid"]).toBe(requests[i]!.id)
        }
      }
      const changes = yield* ChangeStream
      const page = yield* changes.read(SCOPE, { after: "0", count: 10_000 })
      const writes = new Map<string, number>()
      for (const entry of page.entries) if (entry.change === "StoreAndStart") writes.set(entry.id, (writes.get(entry.id) ?? 0) + 1)
      expect(writes.size).toBe(REQUESTS)
      expect([...writes.values()].every((n) => n === 1)).toBe(true)
      expect(yield* jobOrderState("burst-0")).toBe("AllowedToStart_Ready")
      // One status event per request, none for the copies.
      yield* eventually(Effect.sync(() => (mes.statusEvents.length >= REQUESTS ? true : undefined)))
      expect(mes.statusEvents.length).toBe(REQUESTS)
    }).pipe(Effect.scoped, Effect.provide(storeFor(prefix)))
  })
})
