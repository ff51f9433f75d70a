import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Valkey, ValkeyStreams } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { DEFAULT_TRIM_INTERVAL_MS, type PollerEntry } from "@microdcs/poller"
import { append, base, Boom, freshLayer, pendingCount, register, start, streamIds, until } from "./PollerKit.js"

describe("Poller trim by default", () => {
  it.live(
    "trims a work stream without being asked, periodically, keeping every entry some group still needs",
    () =>
      Effect.gen(function* () {
        const valkey = yield* Valkey
        const streams = yield* ValkeyStreams
        const stream = yield* valkey.key("sfcWork", { scope: "busy" })
        yield* streams.ensureGroup(stream, "engine")
        yield* streams.ensureGroup(stream, "audit")
        const ids: Array<string> = []
        for (let i = 0; i < 100; i++) ids.push(yield* append("busy", { n: String(i), ...(i === 50 ? { poison: "yes" } : {}) }, { nudge: false }))
        // A second group that acknowledged 20 entries, holds 10 pending and has not read the rest.
        const [read] = yield* streams.readGroup({ streams: [stream], group: "audit", consumer: "auditor", count: 30 })
        expect(read!.entries).toHaveLength(30)
        yield* streams.ack(stream, "audit", ids.slice(0, 20))

        // The engine's own group keeps entry 50 pending (it fails, and its retry is far away).
        const handler = (entry: PollerEntry) => (entry.fields["poison"] ? Effect.fail(new Boom({ message: "stuck" })) : Effect.void)
        const { poller } = yield* start({ ...base, maxDeliveries: 100, backoff: { initialMs: 60_000 }, handler })
        yield* until(poller.stats, (s) => s.processed === 99 && s.trimmed > 0, "20 seconds")
        // The oldest entry some group needs is the audit group's first pending one.
        expect(yield* streamIds("busy")).toEqual(ids.slice(20))
        expect(yield* pendingCount("busy", "audit")).toBe(10)
        expect(yield* pendingCount("busy", "engine")).toBe(1)

        // The audit group catches up: the next periodic trim goes up to the engine's pending entry.
        const [rest] = yield* streams.readGroup({ streams: [stream], group: "audit", consumer: "auditor", count: 100 })
        expect(rest!.entries).toHaveLength(70)
        yield* streams.ack(stream, "audit", ids.slice(20))
        yield* until(streamIds("busy"), (left) => left.length === 50, "30 seconds")
        expect(yield* streamIds("busy")).toEqual(ids.slice(50))
        expect(yield* pendingCount("busy", "engine")).toBe(1)
        expect((yield* streams.pendingEntries(stream, "engine"))[0]).toMatchObject({ id: ids[50], consumer: "c1" })
      }).pipe(Effect.scoped, Effect.provide(freshLayer())),
    60_000
  )

  it.live(
    "never trims the changes stream, which the change publisher reads with its own cursor",
    () =>
      Effect.gen(function* () {
        const valkey = yield* Valkey
        const changes = yield* valkey.key("changes", { scope: "published" })
        const scopes = yield* valkey.key("scopes", {})
        for (let i = 0; i < 5; i++) yield* unsafeCommand(valkey, "xadd", (c) => c.xadd(changes, "*", "n", String(i)))
        yield* unsafeCommand(valkey, "sadd", (c) => c.sadd(scopes, "published"))
        const { poller } = yield* start({ ...base, kind: "changes", stream: "changes", group: "follower", fallbackIntervalMs: 100, handler: () => Effect.void })
        yield* until(poller.stats, (s) => s.processed === 5)
        // Past the default trim interval, every entry is still there.
        yield* Effect.sleep(DEFAULT_TRIM_INTERVAL_MS + 1000)
        expect(yield* streamIds("published", "changes")).toHaveLength(5)
        expect((yield* poller.stats).trimmed).toBe(0)
      }).pipe(Effect.scoped, Effect.provide(freshLayer())),
    60_000
  )

  it.live("refuses a trim interval for the changes stream, before it creates a group or a heartbeat", () =>
    Effect.gen(function* () {
      const valkey = yield* Valkey
      yield* register("published")
      const error = yield* Effect.flip(
        start({ ...base, kind: "changes", stream: "changes", group: "follower", trimIntervalMs: 1000, handler: () => Effect.void })
      )
      expect(error).toMatchObject({ _tag: "InvalidInput", field: "trimIntervalMs" })
      expect(error.message).toContain("publisher")
      const changes = yield* valkey.key("changes", { scope: "published" })
      const heartbeat = yield* valkey.key("pollerHeartbeat", { kind: "changes", group: "follower", consumer: "c1" })
      expect(yield* unsafeCommand(valkey, "exists", (c) => c.exists(changes, heartbeat))).toBe(0)
    }).pipe(Effect.scoped, Effect.provide(freshLayer()))
  )
})
