import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Metric, Queue, Ref } from "effect"
import { Valkey, ValkeyStreams } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { BatchOutcome, type PollerEntry, type PollerOptions } from "@microdcs/poller"
import { append, base, Boom, freshLayer, pendingCount, start, until } from "./PollerKit.js"

/**
 * Every command the server runs on `key`, from MONITOR on a connection of its own. `settled`
 * returns the log once the server has run everything sent before it: MONITOR reports commands in
 * the order they ran, so once a marker sent after them shows up, none is still to come.
 */
const commandsOn = (key: string) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const log: Array<ReadonlyArray<string>> = []
    let markers = 0
    const seen = new Set<string>()
    yield* Effect.acquireRelease(
      unsafeCommand(valkey, "monitor", async (c) => {
        const m = await c.monitor()
        m.on("monitor", (_time: string, args: Array<string>, source: string) => {
          if (args[0]?.toUpperCase() === "ECHO") seen.add(args[1] ?? "")
          // Commands of scripts (the dead letter's XACK) are the script's own, not the poller's.
          else if (source !== "lua" && args.includes(key)) log.push(args)
        })
        return m
      }),
      (m) => Effect.sync(() => m.disconnect())
    )
    const settled = Effect.gen(function* () {
      const marker = `${key}-marker-${markers++}`
      yield* unsafeCommand(valkey, "echo", (c) => c.echo(marker))
      yield* until(Effect.sync(() => seen.has(marker)), (ok) => ok, { what: "the MONITOR marker" })
      return [...log]
    })
    return { settled }
  })

const streamKey = (scope: string) => Effect.flatMap(Valkey, (v) => v.key("sfcWork", { scope }))

const acks = (log: ReadonlyArray<ReadonlyArray<string>>) => log.filter((args) => args[0]?.toUpperCase() === "XACK").map((args) => args.slice(3))

describe("Poller batch handler", () => {
  it.live("gets the entries of a scope in stream order, one call per read, and acknowledges each batch with one XACK", () =>
    Effect.gen(function* () {
      const monitor = yield* commandsOn(yield* streamKey("ordered"))
      const ids: Array<string> = []
      for (let i = 0; i < 10; i++) ids.push(yield* append("ordered", { n: String(i) }, { nudge: false }))
      const processedMetric = Metric.counter("microdcs_poller_processed_total").pipe(Metric.withAttributes({ kind: "sfc", group: "engine" }))
      const before = (yield* Metric.value(processedMetric)).count
      const batches = yield* Ref.make<Array<ReadonlyArray<PollerEntry>>>([])
      const { poller } = yield* start({
        ...base,
        batchSize: 4,
        handleBatch: (entries) => Ref.update(batches, (b) => [...b, entries])
      })
      yield* poller.wake("ordered")
      yield* until(poller.stats, (s) => s.processed === 10)
      const got = yield* Ref.get(batches)
      expect(got.map((b) => b.length)).toEqual([4, 4, 2])
      expect(got.flat().map((e) => e.id)).toEqual(ids)
      expect(got.flat().map((e) => e.fields["n"])).toEqual(ids.map((_, i) => String(i)))
      expect(got.flat().every((e) => e.deliveries === 1 && e.scope === "ordered" && e.kind === "sfc")).toBe(true)
      expect(acks(yield* monitor.settled)).toEqual([ids.slice(0, 4), ids.slice(4, 8), ids.slice(8)])
      expect(yield* pendingCount("ordered")).toBe(0)
      expect(yield* poller.stats).toMatchObject({ processed: 10, failed: 0, inFlight: 0 })
      expect((yield* Metric.value(processedMetric)).count - before).toBe(10)
    }).pipe(Effect.scoped, Effect.provide(freshLayer()))
  )

  it.live("the per-entry handler runs on the batch path: one XACK per read too", () =>
    Effect.gen(function* () {
      const monitor = yield* commandsOn(yield* streamKey("per-entry"))
      const ids: Array<string> = []
      for (let i = 0; i < 6; i++) ids.push(yield* append("per-entry", { n: String(i) }, { nudge: false }))
      const seen = yield* Queue.unbounded<string>()
      const { poller } = yield* start({ ...base, batchSize: 3, handler: (e: PollerEntry) => Queue.offer(seen, e.id).pipe(Effect.asVoid) })
      yield* poller.wake("per-entry")
      yield* until(poller.stats, (s) => s.processed === 6)
      expect([...(yield* Queue.clear(seen))].sort()).toEqual(ids)
      expect(acks(yield* monitor.settled).map((a) => [...a].sort())).toEqual([ids.slice(0, 3), ids.slice(3)])
    }).pipe(Effect.scoped, Effect.provide(freshLayer()))
  )

  it.live("a failing entry is retried alone and dead-lettered after maxDeliveries while the others of its batch are acknowledged", () =>
    Effect.gen(function* () {
      const streams = yield* ValkeyStreams
      const monitor = yield* commandsOn(yield* streamKey("mixed"))
      const ids: Array<string> = []
      for (let i = 0; i < 5; i++) ids.push(yield* append("mixed", i === 2 ? { n: "2", poison: "yes" } : { n: String(i) }, { nudge: false }))
      const batches = yield* Ref.make<Array<ReadonlyArray<PollerEntry>>>([])
      const { poller } = yield* start({
        ...base,
        maxDeliveries: 3,
        handleBatch: (entries) =>
          Ref.update(batches, (b) => [...b, entries]).pipe(
            Effect.as(BatchOutcome.failed(entries.filter((e) => e.fields["poison"]).map((e) => ({ id: e.id, error: new Boom({ message: "poisoned" }) }))))
          )
      })
      yield* poller.wake("mixed")
      yield* until(poller.stats, (s) => s.deadLettered === 1)
      const got = yield* Ref.get(batches)
      expect(got.map((b) => b.map((e) => e.id))).toEqual([ids, [ids[2]], [ids[2]]])
      expect(got.map((b) => b[0]!.deliveries)).toEqual([1, 2, 3])
      expect(acks(yield* monitor.settled)).toEqual([[ids[0], ids[1], ids[3], ids[4]]])
      expect(yield* pendingCount("mixed")).toBe(0)
      const dead = yield* streams.readDeadLetters("sfc", "mixed")
      expect(dead.entries).toHaveLength(1)
      expect(dead.entries[0]).toMatchObject({ originalId: ids[2], deliveries: 3, fields: { n: "2", poison: "yes" } })
      expect(dead.entries[0]!.error).toContain("Boom: poisoned")
      expect(yield* poller.stats).toMatchObject({ processed: 4, failed: 3, retried: 2, deadLettered: 1 })
    }).pipe(Effect.scoped, Effect.provide(freshLayer()))
  )

  it.live("a batch whose effect fails (or dies) fails every entry of it; each is retried and then succeeds", () =>
    Effect.gen(function* () {
      const ids: Array<string> = []
      for (let i = 0; i < 3; i++) ids.push(yield* append("all-fail", { n: String(i) }, { nudge: false }))
      const succeeded = yield* Ref.make<Array<string>>([])
      // By delivery, whichever entries a retry groups together: fail, then die, then succeed.
      const { poller } = yield* start({
        ...base,
        handleBatch: (entries) =>
          entries[0]!.deliveries === 1
            ? Effect.fail(new Boom({ message: "whole batch" }))
            : entries[0]!.deliveries === 2
              ? Effect.die(new Error("defect"))
              : Ref.update(succeeded, (r) => [...r, ...entries.map((e) => `${e.id}@${e.deliveries}`)])
      })
      yield* poller.wake("all-fail")
      yield* until(poller.stats, (s) => s.processed === 3)
      expect([...(yield* Ref.get(succeeded))].sort()).toEqual(ids.map((id) => `${id}@3`))
      expect(yield* poller.stats).toMatchObject({ processed: 3, failed: 6, deadLettered: 0 })
      expect(yield* pendingCount("all-fail")).toBe(0)
    }).pipe(Effect.scoped, Effect.provide(freshLayer()))
  )

  it.live("a batch interrupted mid-run (shutdown past the grace) leaves its entries pending, and another consumer takes them over", () =>
    Effect.gen(function* () {
      const ids: Array<string> = []
      for (let i = 0; i < 4; i++) ids.push(yield* append("crashed", { n: String(i) }, { nudge: false }))
      const started = yield* Deferred.make<number>()
      const doomed = yield* start({
        ...base,
        consumer: "doomed",
        shutdownGraceMs: 20,
        handleBatch: (entries) => Deferred.succeed(started, entries.length).pipe(Effect.andThen(Effect.never))
      })
      yield* doomed.poller.wake("crashed")
      expect(yield* Deferred.await(started).pipe(Effect.timeout("10 seconds"))).toBe(4)
      yield* doomed.stop
      expect(yield* pendingCount("crashed")).toBe(4)
      // Its heartbeat is gone with it: the next consumer takes the batch over at its first check.
      const batches = yield* Queue.unbounded<ReadonlyArray<PollerEntry>>()
      const { poller } = yield* start({ ...base, consumer: "heir", handleBatch: (entries) => Queue.offer(batches, entries).pipe(Effect.asVoid) })
      yield* until(poller.stats, (s) => s.processed === 4)
      const got = [...(yield* Queue.clear(batches))].flat()
      expect(got.map((e) => e.id)).toEqual(ids)
      expect(got.map((e) => e.deliveries)).toEqual([2, 2, 2, 2])
      expect(yield* pendingCount("crashed")).toBe(0)
    }).pipe(Effect.scoped, Effect.provide(freshLayer()))
  )

  it.live("per-entry handlers interrupted mid-batch: what finished is acknowledged, the rest stays pending", () =>
    Effect.gen(function* () {
      const ids: Array<string> = []
      for (let i = 0; i < 3; i++) ids.push(yield* append("half-done", { n: String(i) }, { nudge: false }))
      const hung = yield* Deferred.make<void>()
      const doomed = yield* start({
        ...base,
        consumer: "doomed",
        concurrency: 1,
        batchSize: 3,
        shutdownGraceMs: 20,
        handler: (e: PollerEntry) => (e.fields["n"] === "0" ? Effect.void : Deferred.succeed(hung, undefined).pipe(Effect.andThen(Effect.never)))
      })
      yield* doomed.poller.wake("half-done")
      yield* Deferred.await(hung).pipe(Effect.timeout("10 seconds"))
      yield* doomed.stop
      const streams = yield* ValkeyStreams
      const pending = yield* streams.pendingEntries(yield* streamKey("half-done"), "engine")
      expect(pending.map((p) => p.id)).toEqual(ids.slice(1))
      expect(yield* doomed.poller.stats).toMatchObject({ processed: 1, inFlight: 0 })
    }).pipe(Effect.scoped, Effect.provide(freshLayer()))
  )

  it.live("a handler that throws (a bug) fails its entry only; the scope keeps being consumed", () =>
    Effect.gen(function* () {
      const streams = yield* ValkeyStreams
      const { poller } = yield* start({
        ...base,
        maxDeliveries: 1,
        handler: (e: PollerEntry) => {
          if (e.fields["poison"]) throw new Error("thrown, not failed")
          return Effect.void
        }
      })
      yield* append("throws", { n: "0", poison: "yes" })
      yield* append("throws", { n: "1" })
      yield* until(poller.stats, (s) => s.deadLettered === 1 && s.processed === 1)
      yield* append("throws", { n: "2" })
      yield* until(poller.stats, (s) => s.processed === 2)
      expect((yield* streams.readDeadLetters("sfc", "throws")).entries[0]!.error).toContain("thrown, not failed")
    }).pipe(Effect.scoped, Effect.provide(freshLayer()))
  )

  it.live("refuses options with both handlers or neither, before connecting anything", () =>
    Effect.gen(function* () {
      const both = { ...base, handler: () => Effect.void, handleBatch: () => Effect.void } as unknown as PollerOptions<never, never>
      expect(yield* Effect.flip(start(both))).toMatchObject({ _tag: "InvalidInput", field: "handler" })
      const neither = { ...base } as unknown as PollerOptions<never, never>
      expect(yield* Effect.flip(start(neither))).toMatchObject({ _tag: "InvalidInput", field: "handler" })
    }).pipe(Effect.scoped, Effect.provide(freshLayer()))
  )
})
