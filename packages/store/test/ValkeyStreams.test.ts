import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Fiber, Layer, Metric, Stream } from "effect"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import { Valkey, ValkeyLayer, ValkeyStreams } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { autoClaimDeletedCounter } from "@microdcs/store/testing"
import { dedicated } from "../src/RawDoor.js"

const prefix = randomPrefix()
const services = ValkeyStreams.Default.pipe(Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix })))

/** A fresh work stream key per test, built by the key schema. */
const streamOf = (scope: string) => Effect.flatMap(Valkey, (v) => v.key("sfcWork", { scope }))

/** Plain XADD (the SFC CAS script does this in production). */
const append = (stream: string, fields: Record<string, string>) =>
  Effect.flatMap(Valkey, (v) => unsafeCommand(v, "xadd", (c) => c.xadd(stream, "*", ...Object.entries(fields).flat()) as Promise<string>))

const ids = (entries: ReadonlyArray<{ readonly id: string }>) => entries.map((e) => e.id)

describe("ValkeyStreams groups", () => {
  it.effect("creates a group once; BUSYGROUP is not an error; entries written before the group are read", () =>
    Effect.gen(function* () {
      const streams = yield* ValkeyStreams
      const stream = yield* streamOf("groups")
      const early = yield* append(stream, { job: "early" })
      expect(yield* streams.ensureGroup(stream, "g")).toBe(true)
      expect(yield* streams.ensureGroup(stream, "g")).toBe(false)
      const [batch] = yield* streams.readGroup({ streams: [stream], group: "g", consumer: "c1" })
      expect(batch).toEqual({ stream, entries: [{ id: early, fields: { job: "early" } }] })
      expect(yield* streams.pending(stream, "g")).toEqual({
        count: 1,
        smallestId: early,
        largestId: early,
        consumers: [{ consumer: "c1", count: 1 }]
      })
      expect(yield* streams.ack(stream, "g", [early])).toBe(1)
      expect((yield* streams.pending(stream, "g")).count).toBe(0)
      expect(yield* streams.readGroup({ streams: [stream], group: "g", consumer: "c1" })).toEqual([])
    }).pipe(Effect.provide(services))
  )

  it.effect("ackAndDelete settles an entry already read and keeps one not yet read from ever being delivered", () =>
    Effect.gen(function* () {
      const streams = yield* ValkeyStreams
      const stream = yield* streamOf("ack-delete")
      yield* streams.ensureGroup(stream, "g")
      const read = yield* append(stream, { job: "read" })
      yield* streams.readGroup({ streams: [stream], group: "g", consumer: "c1" })
      const unread = yield* append(stream, { job: "unread" })
      const kept = yield* append(stream, { job: "kept" })
      expect(yield* streams.ackAndDelete(stream, "g", [read, unread])).toBe(2)
      expect((yield* streams.pending(stream, "g")).count).toBe(0)
      // A consumer that restarts (or another one) gets only the entry nobody settled.
      const [batch] = yield* streams.readGroup({ streams: [stream], group: "g", consumer: "c1" })
      expect(ids(batch!.entries)).toEqual([kept])
      expect(yield* streams.ackAndDelete(stream, "g", [])).toBe(0)
    }).pipe(Effect.provide(services))
  )

  it.effect("a group created at $ skips what was there; MKSTREAM creates the stream", () =>
    Effect.gen(function* () {
      const streams = yield* ValkeyStreams
      const stream = yield* streamOf("dollar")
      yield* streams.ensureGroup(stream, "first")
      yield* append(stream, { n: "1" })
      yield* streams.ensureGroup(stream, "late", "$")
      const fresh = yield* append(stream, { n: "2" })
      const [batch] = yield* streams.readGroup({ streams: [stream], group: "late", consumer: "c" })
      expect(ids(batch!.entries)).toEqual([fresh])
    }).pipe(Effect.provide(services))
  )

  it.effect("rejects bad input before sending, and maps wrong types and missing groups to typed errors", () =>
    Effect.gen(function* () {
      const streams = yield* ValkeyStreams
      const valkey = yield* Valkey
      const stream = yield* streamOf("bad")
      expect(yield* Effect.flip(streams.ensureGroup(stream, "g", "latest"))).toMatchObject({ _tag: "InvalidInput", field: "startId" })
      expect(yield* Effect.flip(streams.ensureGroup(stream, ""))).toMatchObject({ _tag: "InvalidInput", field: "group" })
      expect(yield* unsafeCommand(valkey, "exists", (c) => c.exists(stream))).toBe(0)
      const notFound = yield* Effect.flip(streams.readGroup({ streams: [stream], group: "nope", consumer: "c" }))
      expect(notFound._tag).toBe("NotFound")
      const plain = yield* valkey.key("sfcWork", { scope: "a-string" })
      yield* unsafeCommand(valkey, "set", (c) => c.set(plain, "x"))
      expect(yield* Effect.flip(streams.ensureGroup(plain, "g"))).toMatchObject({ _tag: "WrongType", key: plain, actual: "string" })
      const noConnection = yield* Effect.flip(streams.readGroup({ streams: [stream], group: "g", consumer: "c", blockMs: 10 }))
      expect(noConnection).toMatchObject({ _tag: "InvalidInput", field: "blockMs" })
      expect(yield* Effect.flip(streams.pendingEntries(stream, "g", { count: 0 }))).toMatchObject({ _tag: "InvalidInput", field: "count" })
    }).pipe(Effect.provide(services))
  )

  it.live("a blocking read waits on a dedicated connection and returns as soon as an entry arrives", () =>
    Effect.gen(function* () {
      const streams = yield* ValkeyStreams
      const valkey = yield* Valkey
      const stream = yield* streamOf("blocking")
      yield* streams.ensureGroup(stream, "g")
      const timed = yield* dedicated(valkey, "short-timeout", { commandTimeoutMs: 500 })
      const refused = yield* Effect.flip(streams.readGroup({ streams: [stream], group: "g", consumer: "c", blockMs: 1000 }, timed))
      expect(refused).toMatchObject({ _tag: "InvalidInput", field: "blockMs" })
      const blocking = yield* dedicated(valkey, "blocking-reader", { commandTimeoutMs: undefined })
      const reader = yield* Effect.forkChild(streams.readGroup({ streams: [stream], group: "g", consumer: "c", blockMs: 5000 }, blocking))
      yield* Effect.sleep("50 millis")
      const id = yield* append(stream, { job: "wake" })
      const started = Date.now()
      const [batch] = yield* Fiber.join(reader)
      expect(Date.now() - started).toBeLessThan(1000)
      expect(ids(batch!.entries)).toEqual([id])
    }).pipe(Effect.scoped, Effect.provide(services))
  )
})

describe("ValkeyStreams claims", () => {
  it.live("XAUTOCLAIM takes orphans page by page to cursor 0-0 and counts deleted ids", () =>
    Effect.gen(function* () {
      const streams = yield* ValkeyStreams
      const valkey = yield* Valkey
      const stream = yield* streamOf("orphans")
      yield* streams.ensureGroup(stream, "claimers")
      const written = [] as Array<string>
      for (let i = 0; i < 5; i++) written.push(yield* append(stream, { n: String(i) }))
      yield* streams.readGroup({ streams: [stream], group: "claimers", consumer: "dead" })
      yield* unsafeCommand(valkey, "xdel", (c) => c.xdel(stream, written[1]!))
      const counter = Metric.withAttributes(autoClaimDeletedCounter, { group: "claimers" })
      const before = (yield* Metric.value(counter)).count
      yield* Effect.sleep("30 millis")
      const pages = yield* Stream.runCollect(streams.autoClaim(stream, "claimers", "alive", { minIdleMs: 20, count: 2 }))
      expect(pages.length).toBeGreaterThan(1)
      expect(pages[pages.length - 1]!.cursor).toBe("0-0")
      const claimed = pages.flatMap((p) => p.entries)
      expect(ids(claimed)).toEqual([written[0], written[2], written[3], written[4]])
      expect(claimed.every((e) => e.deliveries === 2)).toBe(true)
      expect(pages.flatMap((p) => p.deletedIds)).toEqual([written[1]])
      expect((yield* Metric.value(counter)).count - before).toBe(1)
      const pending = yield* streams.pending(stream, "claimers")
      expect(pending).toMatchObject({ count: 4, consumers: [{ consumer: "alive", count: 4 }] })
      // Entries idle for less than minIdleMs stay where they are.
      const again = yield* Stream.runCollect(streams.autoClaim(stream, "claimers", "third", { minIdleMs: 60_000 }))
      expect(again.flatMap((p) => p.entries)).toEqual([])
    }).pipe(Effect.provide(services))
  )

  it.live("XCLAIM re-delivers one's own pending entry and counts the delivery", () =>
    Effect.gen(function* () {
      const streams = yield* ValkeyStreams
      const stream = yield* streamOf("reclaim")
      yield* streams.ensureGroup(stream, "g")
      const id = yield* append(stream, { job: "x" })
      yield* streams.readGroup({ streams: [stream], group: "g", consumer: "c" })
      const [entry] = yield* streams.claim(stream, "g", "c", 0, [id])
      expect(entry).toEqual({ id, fields: { job: "x" } })
      const [row] = yield* streams.pendingEntries(stream, "g", { consumer: "c" })
      expect(row).toMatchObject({ id, consumer: "c", deliveries: 2 })
      expect(yield* streams.claim(stream, "g", "c", 60_000, [id])).toEqual([])
    }).pipe(Effect.provide(services))
  )
})

layer(services)("ValkeyStreams dead letters", (it) => {
  it.effect("moves an entry with its error, id and delivery count, and acknowledges it atomically", () =>
    Effect.gen(function* () {
      const streams = yield* ValkeyStreams
      const stream = yield* streamOf("dlq")
      const deadLetter = yield* streams.deadLetterKey("sfc", "dlq")
      yield* streams.ensureGroup(stream, "g")
      const id = yield* append(stream, { job: "poison", "dlq.error": "a field with a metadata name" })
      yield* streams.readGroup({ streams: [stream], group: "g", consumer: "c" })
      yield* streams.claim(stream, "g", "c", 0, [id])
      const notOwner = yield* streams.deadLetter({ stream, deadLetter, group: "g", consumer: "other", id, error: "boom" })
      expect(notOwner).toEqual({ status: "notowner", owner: "c" })
      const moved = yield* streams.deadLetter({ stream, deadLetter, group: "g", consumer: "c", id, error: "boom" })
      expect(moved.status).toBe("moved")
      expect((yield* streams.pending(stream, "g")).count).toBe(0)
      expect(yield* streams.deadLetter({ stream, deadLetter, group: "g", consumer: "c", id, error: "boom" })).toEqual({ status: "notpending" })
      const page = yield* streams.readDeadLetters("sfc", "dlq")
      expect(page.next).toBeNull()
      expect(page.entries).toHaveLength(1)
      expect(page.entries[0]).toMatchObject({
        stream,
        group: "g",
        originalId: id,
        consumer: "c",
        deliveries: 2,
        error: "boom",
        fields: { job: "poison", "dlq.error": "a field with a metadata name" }
      })
      const listed = yield* streams.listDeadLetters("sfc")
      expect(listed).toEqual([{ key: deadLetter, kind: "sfc", scope: "dlq", length: 1 }])
      expect(yield* streams.listDeadLetters("changes")).toEqual([])
    })
  )

  it.effect("pages through dead letters", () =>
    Effect.gen(function* () {
      const streams = yield* ValkeyStreams
      const stream = yield* streamOf("dlq-paged")
      const deadLetter = yield* streams.deadLetterKey("sfc", "dlq-paged")
      yield* streams.ensureGroup(stream, "g")
      for (let i = 0; i < 3; i++) yield* append(stream, { n: String(i) })
      const [batch] = yield* streams.readGroup({ streams: [stream], group: "g", consumer: "c" })
      for (const entry of batch!.entries) yield* streams.deadLetter({ stream, deadLetter, group: "g", consumer: "c", id: entry.id, error: "e" })
      const first = yield* streams.readDeadLetters("sfc", "dlq-paged", { count: 2 })
      expect(first.entries.map((e) => e.fields["n"])).toEqual(["0", "1"])
      const second = yield* streams.readDeadLetters("sfc", "dlq-paged", { count: 2, after: first.next! })
      expect(second).toMatchObject({ next: null, entries: [{ fields: { n: "2" } }] })
    })
  )
})

layer(services)("ValkeyStreams trim", (it) => {
  it.effect("removes only what every group has acknowledged", () =>
    Effect.gen(function* () {
      const streams = yield* ValkeyStreams
      const valkey = yield* Valkey
      const stream = yield* streamOf("trim")
      const all = [] as Array<string>
      for (let i = 0; i < 6; i++) all.push(yield* append(stream, { n: String(i) }))
      const remaining = () => unsafeCommand(valkey, "xrange", (c) => c.xrange(stream, "-", "+")).pipe(Effect.map((rows) => rows.map((r) => r[0])))
      // No group yet: nobody has acknowledged anything, so nothing goes.
      expect(yield* streams.trim(stream)).toEqual({ removed: 0, threshold: null })
      yield* streams.ensureGroup(stream, "fast")
      yield* streams.ensureGroup(stream, "slow")
      yield* streams.readGroup({ streams: [stream], group: "fast", consumer: "c" })
      yield* streams.ack(stream, "fast", all.slice(0, 4))
      yield* streams.readGroup({ streams: [stream], group: "slow", consumer: "c", count: 3 })
      yield* streams.ack(stream, "slow", [all[0]!, all[2]!])
      // slow still holds all[1] pending and has never seen all[3..5]; fast holds all[4..5].
      expect(yield* streams.trim(stream)).toEqual({ removed: 1, threshold: all[1] })
      expect(yield* remaining()).toEqual(all.slice(1))
      yield* streams.ack(stream, "slow", [all[1]!])
      expect(yield* streams.trim(stream)).toEqual({ removed: 1, threshold: all[2] })
      yield* streams.readGroup({ streams: [stream], group: "slow", consumer: "c" })
      yield* streams.ack(stream, "slow", all.slice(3))
      expect(yield* streams.trim(stream)).toEqual({ removed: 2, threshold: all[4] })
      expect(yield* remaining()).toEqual(all.slice(4))
      yield* streams.ack(stream, "fast", all.slice(4))
      // Everything acknowledged: only the last delivered entry is kept.
      expect(yield* streams.trim(stream)).toEqual({ removed: 1, threshold: all[5] })
      expect(yield* remaining()).toEqual([all[5]])
    })
  )

  it.effect("a group that has read nothing keeps the whole stream; a missing stream is a no-op", () =>
    Effect.gen(function* () {
      const streams = yield* ValkeyStreams
      const stream = yield* streamOf("trim-idle")
      yield* append(stream, { n: "0" })
      yield* streams.ensureGroup(stream, "idle")
      expect(yield* streams.trim(stream)).toEqual({ removed: 0, threshold: "0-0" })
      expect(yield* streams.trim(yield* streamOf("trim-missing"))).toEqual({ removed: 0, threshold: null })
    })
  )
})

layer(services)("ValkeyStreams lengths", (it) => {
  it.effect("reads the stream length of every registered scope in one call, 0 for a scope without the stream", () =>
    Effect.gen(function* () {
      const streams = yield* ValkeyStreams
      const valkey = yield* Valkey
      const scopes = yield* valkey.key("scopes", {})
      const full = yield* streamOf("len-full")
      for (let i = 0; i < 3; i++) yield* append(full, { n: String(i) })
      yield* unsafeCommand(valkey, "sadd", (c) => c.sadd(scopes, "len-full", "len-empty"))
      const rows = (yield* streams.lengthPerScope("sfcWork")).filter((r) => r.scope.startsWith("len-"))
      expect(rows).toEqual([
        { scope: "len-empty", stream: yield* streamOf("len-empty"), length: 0 },
        { scope: "len-full", stream: full, length: 3 }
      ])
      expect(yield* streams.lengths([full, yield* streamOf("len-empty")])).toEqual([3, 0])
      expect(yield* streams.lengths([])).toEqual([])
    })
  )

  it.effect("a key of another type where a stream belongs is a WrongType naming it", () =>
    Effect.gen(function* () {
      const streams = yield* ValkeyStreams
      const valkey = yield* Valkey
      const good = yield* streamOf("len-good")
      const bad = yield* streamOf("len-bad")
      yield* append(good, { n: "0" })
      yield* unsafeCommand(valkey, "set", (c) => c.set(bad, "not a stream"))
      const error = yield* Effect.flip(streams.lengths([good, bad]))
      expect(error).toMatchObject({ _tag: "WrongType", key: bad, expected: "stream", actual: "string" })
      yield* unsafeCommand(valkey, "del", (c) => c.del(bad))
    })
  )
})
