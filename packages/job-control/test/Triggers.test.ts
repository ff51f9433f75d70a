import { Effect, Layer } from "effect"
import { describe, expect, it } from "@effect/vitest"
import { ReturnStatus } from "@microdcs/job-state"
import { JobOrderDao, TriggerStore, Valkey } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { until } from "@microdcs/test-utils"
import { putWorkMaster } from "@microdcs/testkit"
import {
  type TriggerChange,
  TriggerChangeAnnouncer,
  TriggerCatalog,
  TRIGGER_CONFIG_EVENT_TYPE,
  triggerJobOrderId,
  TriggerStarts
} from "@microdcs/job-control"
import { handle, request, snapshot, world } from "./Kit.js"

/** Every announcement the processor made, to see that a config event announces its edit. */
const announced: Array<TriggerChange> = []
const announcer = Layer.succeed(TriggerChangeAnnouncer, { announce: (change) => Effect.sync(() => void announced.push(change)) })

// The refresh is an hour away: whatever a test sees sooner came through the nudge.
const triggers = (refreshIntervalMs: number) =>
  TriggerStarts.Default.pipe(Layer.provideMerge(TriggerCatalog.layer({ refreshIntervalMs })), Layer.provideMerge(world()), Layer.provide(announcer))

const trigger = (id: string, extra: Record<string, unknown> = {}) => ({ id, type: "com.example.bin.empty.v1", workMasterId: "wm-restock", ...extra })

const configEvent = (scope: string, data: unknown, method?: string) =>
  request(TRIGGER_CONFIG_EVENT_TYPE, scope, data, method === undefined ? {} : { method })

const binEmpty = (scope: string, id: string) => ({ source: "urn:station:7", id, type: "com.example.bin.empty.v1", subject: `${scope}/bin-3` })

/** Waits until the catalog holds `id` at `version` (or, with version 0, no longer holds it). */
const untilHeld = (id: string, version: number) =>
  until(
    Effect.flatMap(TriggerCatalog, (c) => c.triggers),
    (all) => (version === 0 ? !all.some((t) => t.id === id) : all.some((t) => t.id === id && t.version === version)),
    { what: `trigger ${id} v${version} held` }
  )

/** A test over its own store (fresh prefix), catalog and processor, on the live clock. */
const live = <E>(name: string, body: Effect.Effect<void, E, Layer.Success<ReturnType<typeof triggers>>>, refreshIntervalMs = 3_600_000) =>
  it.live(name, () => body.pipe(Effect.provide(triggers(refreshIntervalMs))))

describe("triggers", () => {
  live("a config event PUT stores the trigger, announces it, and the next event starts its job order",
    Effect.gen(function* () {
      yield* putWorkMaster("tr-a", { ID: "wm-restock" })
      const put = yield* handle(configEvent("tr-a", trigger("t-a")))
      expect(put.reply).toMatchObject({ status: 1, data: { ReturnStatus: 1, ID: "t-a", Version: 1 } })
      expect(put.reply.type).toBe("com.github.aschamberger.ISA95-JOBCONTROL_V2.config.triggerResponse.v1")
      expect(announced).toContainEqual({ id: "t-a", scope: "tr-a", change: "put", version: 1 })
      yield* untilHeld("t-a", 1)

      const starts = yield* TriggerStarts
      const [outcome] = yield* starts.start(binEmpty("tr-a", "ev-1"), "urn:island:test")
      expect(outcome).toMatchObject({ _tag: "Started", jobOrderId: triggerJobOrderId("t-a", binEmpty("tr-a", "ev-1")) })
      const order = yield* Effect.flatMap(JobOrderDao, (d) => d.get(triggerJobOrderId("t-a", binEmpty("tr-a", "ev-1"))))
      expect(order.scope).toBe("tr-a")
      expect(JSON.parse(order.doc)).toMatchObject({ JobOrder: { WorkMasterID: [{ ID: "wm-restock" }] }, State: [{ StateText: { Text: "AllowedToStart" } }, { StateText: { Text: "Ready" } }] })
      // An event of another type or scope fires nothing.
      expect(yield* starts.start({ ...binEmpty("tr-a", "ev-2"), type: "com.example.other.v1" }, "urn:island:test")).toEqual([])
      expect(yield* starts.start(binEmpty("tr-other", "ev-3"), "urn:island:test")).toEqual([])
    })
  )

  live("a redelivered event starts one job order: the second delivery finds it taken",
    Effect.gen(function* () {
      yield* putWorkMaster("tr-b", { ID: "wm-restock" })
      const row = yield* Effect.flatMap(TriggerStore, (s) => s.put({ ...trigger("t-b"), scope: "tr-b" }))
      yield* untilHeld("t-b", row.version)
      const starts = yield* TriggerStarts
      const first = yield* starts.start(binEmpty("tr-b", "ev-dup"), "urn:island:one")
      // Another instance (another source) and the same instance again: both find it taken.
      const second = yield* starts.start(binEmpty("tr-b", "ev-dup"), "urn:island:two")
      const third = yield* starts.start(binEmpty("tr-b", "ev-dup"), "urn:island:one")
      expect([first, second, third].map((o) => o.map((x) => x._tag))).toEqual([["Started"], ["AlreadyStarted"], ["AlreadyStarted"]])
      const listed = yield* Effect.flatMap(JobOrderDao, (d) => d.list("tr-b"))
      expect(listed.items.map((i) => i.id)).toEqual([triggerJobOrderId("t-b", binEmpty("tr-b", "ev-dup"))])
    })
  )

  live("a disabled trigger starts nothing; enabled again, it does",
    Effect.gen(function* () {
      yield* putWorkMaster("tr-c", { ID: "wm-restock" })
      const store = yield* TriggerStore
      yield* store.put({ ...trigger("t-c"), scope: "tr-c", enabled: false })
      yield* untilHeld("t-c", 1)
      const starts = yield* TriggerStarts
      const before = yield* snapshot
      expect(yield* starts.start(binEmpty("tr-c", "ev-1"), "urn:island:test")).toEqual([])
      expect(yield* snapshot).toEqual(before)
      yield* store.enable("t-c")
      yield* untilHeld("t-c", 2)
      expect((yield* starts.start(binEmpty("tr-c", "ev-1"), "urn:island:test")).map((o) => o._tag)).toEqual(["Started"])
    })
  )

  live("a trigger naming an unknown work master: the event is refused by the acceptance checks, nothing created",
    Effect.gen(function* () {
      const store = yield* TriggerStore
      yield* store.put({ ...trigger("t-d", { workMasterId: "wm-nowhere" }), scope: "tr-d" })
      yield* untilHeld("t-d", 1)
      const starts = yield* TriggerStarts
      const before = yield* snapshot
      const [outcome] = yield* starts.start(binEmpty("tr-d", "ev-1"), "urn:island:test")
      expect(outcome).toMatchObject({ _tag: "Refused", kind: "UnknownReference", message: "unknown workmaster: wm-nowhere" })
      expect(yield* snapshot).toEqual(before)
    })
  )

  live("a bad trigger config is refused with every problem listed and nothing stored",
    Effect.gen(function* () {
      const before = yield* snapshot
      const bad = yield* handle(configEvent("tr-e", { id: "", type: "", workMasterId: 3, priority: "high", extra: true }))
      expect(bad.reply.status).toBe(ReturnStatus.INVALID_REQUEST)
      expect(bad.reply.error?.kind).toBe("InvalidTrigger")
      expect(bad.reply.data["Problems"]).toEqual([
        "extra is not a trigger field (id, scope, type, subject, workMasterId, priority, requirements, enabled)",
        `id must start with a letter or digit and hold only letters, digits, '_', '.', '-' (at most 64), got ""`,
        "workMasterId must be a non-empty text",
        "type must be a non-empty text",
        `priority must be an integer, got "high"`
      ])
      const moved = yield* handle(configEvent("tr-e", { ...trigger("t-e"), scope: "elsewhere" }))
      expect(moved.reply.error?.kind).toBe("ScopeConflict")
      const method = yield* handle(configEvent("tr-e", trigger("t-e"), "PATCH"))
      expect(method.reply.error?.kind).toBe("InvalidMethod")
      expect(yield* snapshot).toEqual(before)
    })
  )

  live("a config event whose data.scope differs from the subject is refused with the conflict and every other problem of the row",
    Effect.gen(function* () {
      const before = yield* snapshot
      const bad = yield* handle(configEvent("tr-g", { id: "t g", type: "", workMasterId: "wm-restock", scope: "elsewhere", priority: 1.5 }))
      expect(bad.reply.status).toBe(ReturnStatus.INVALID_REQUEST)
      expect(bad.reply.error?.kind).toBe("ScopeConflict")
      expect(bad.reply.data["Problems"]).toEqual([
        "data.scope 'elsewhere' differs from the subject's scope 'tr-g'",
        `id must start with a letter or digit and hold only letters, digits, '_', '.', '-' (at most 64), got "t g"`,
        "type must be a non-empty text",
        "priority must be an integer, got 1.5"
      ])
      expect(bad.reply.error?.message).toContain("priority must be an integer")
      const onlyScope = yield* handle(configEvent("tr-g", { ...trigger("t-g"), scope: "elsewhere" }))
      expect(onlyScope.reply.error?.kind).toBe("ScopeConflict")
      expect(onlyScope.reply.data["Problems"]).toEqual(["data.scope 'elsewhere' differs from the subject's scope 'tr-g'"])
      expect(yield* snapshot).toEqual(before)
    })
  )

  live("a config event DELETE removes the trigger (idempotent) and the catalog lets it go",
    Effect.gen(function* () {
      yield* handle(configEvent("tr-f", trigger("t-f")))
      yield* untilHeld("t-f", 1)
      const foreign = yield* handle(configEvent("other", { id: "t-f" }, "DELETE"))
      expect(foreign.reply.error?.kind).toBe("ScopeConflict")
      const removed = yield* handle(configEvent("tr-f", { id: "t-f" }, "DELETE"))
      expect(removed.reply.data).toEqual({ ReturnStatus: 1, ID: "t-f", Removed: 1 })
      expect(announced).toContainEqual({ id: "t-f", scope: "tr-f", change: "delete" })
      yield* untilHeld("t-f", 0)
      const again = yield* handle(configEvent("tr-f", { id: "t-f" }, "delete"))
      expect(again.reply.data).toEqual({ ReturnStatus: 1, ID: "t-f", Removed: 0 })
    })
  )
})

describe("triggers: the periodic refresh", () => {
  live("picks up a change whose nudge was lost",
    Effect.gen(function* () {
      const store = yield* TriggerStore
      const row = yield* store.put({ ...trigger("t-r"), scope: "tr-r" })
      yield* untilHeld("t-r", 1)
      // A write that published no nudge (as if it was lost in a reconnect): only the refresh sees it.
      const valkey = yield* Valkey
      const key = yield* valkey.key("triggers", {})
      yield* unsafeCommand(valkey, "hset", (c) => c.hset(key, "t-r", JSON.stringify({ ...row, enabled: false, version: 2 })))
      yield* until(
        Effect.flatMap(TriggerCatalog, (c) => c.triggers),
        (all) => all.some((t) => t.id === "t-r" && !t.enabled),
        { what: "refresh picked up the change" }
      )
    }),
    200
  )
})
