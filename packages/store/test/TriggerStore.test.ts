import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Queue } from "effect"
import { inject } from "vitest"
import { randomPrefix, until } from "@microdcs/test-utils"
import { InvalidTrigger, Nudges, parseTriggerEdit, TriggerStore, Valkey, ValkeyLayer } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"

const layer = Layer.mergeAll(TriggerStore.Default, Nudges.Default).pipe(Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix: randomPrefix("trg") })))

const row = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  scope: "line-1",
  type: "com.example.bin.empty.v1",
  workMasterId: "wm-restock",
  ...extra
})

/** The raw hash, to show what was (not) written. */
const rawHash = Effect.gen(function* () {
  const valkey = yield* Valkey
  const key = yield* valkey.key("triggers", {})
  return yield* unsafeCommand(valkey, "hgetall", (c) => c.hgetall(key))
})

describe("TriggerStore", () => {
  it.effect("puts, gets, lists, disables, enables and deletes; versions count every write", () =>
    Effect.gen(function* () {
      const triggers = yield* TriggerStore
      const now = new Date("2026-01-02T03:04:05.000Z")
      const created = yield* triggers.put(row("t-a", { subject: "line-1/bin-*", priority: 5, requirements: { EquipmentRequirements: [{ ID: "agv-1" }] } }), { now })
      expect(created).toEqual({
        id: "t-a",
        scope: "line-1",
        type: "com.example.bin.empty.v1",
        subject: "line-1/bin-*",
        workMasterId: "wm-restock",
        priority: 5,
        requirements: { EquipmentRequirements: [{ ID: "agv-1" }] },
        enabled: true,
        version: 1,
        updatedAt: "2026-01-02T03:04:05.000Z"
      })
      yield* triggers.put(row("t-b"))
      expect(yield* triggers.get("t-a")).toEqual(created)
      expect((yield* triggers.list).triggers.map((t) => t.id)).toEqual(["t-a", "t-b"])

      const disabled = yield* triggers.disable("t-a")
      expect(disabled).toMatchObject({ enabled: false, version: 2 })
      // Already off: nothing written, the version stays.
      expect(yield* triggers.disable("t-a")).toMatchObject({ enabled: false, version: 2 })
      expect(yield* triggers.enable("t-a")).toMatchObject({ enabled: true, version: 3 })
      // A row shown as JSON can be put back as it is: version and updatedAt are the store's.
      expect(yield* triggers.put({ ...disabled, priority: 9 })).toMatchObject({ priority: 9, enabled: false, version: 4 })

      yield* triggers.remove("t-a")
      expect((yield* Effect.flip(triggers.get("t-a")))._tag).toBe("NotFound")
      expect((yield* Effect.flip(triggers.remove("t-a")))._tag).toBe("NotFound")
      expect((yield* Effect.flip(triggers.enable("t-a")))._tag).toBe("NotFound")
      expect((yield* triggers.list).triggers.map((t) => t.id)).toEqual(["t-b"])
    }).pipe(Effect.provide(layer))
  )

  it.effect("a conditional write checks the version: create-only, must-match; a conflict writes nothing", () =>
    Effect.gen(function* () {
      const triggers = yield* TriggerStore
      yield* triggers.put(row("t-v"), { expectedVersion: 0 })
      const again = yield* Effect.flip(triggers.put(row("t-v"), { expectedVersion: 0 }))
      expect(again).toMatchObject({ _tag: "VersionConflict", expected: 0, actual: 1 })
      expect(yield* triggers.put(row("t-v", { priority: 2 }), { expectedVersion: 1 })).toMatchObject({ version: 2 })
      const stale = yield* Effect.flip(triggers.put(row("t-v", { priority: 3 }), { expectedVersion: 1 }))
      expect(stale).toMatchObject({ _tag: "VersionConflict", expected: 1, actual: 2 })
      expect((yield* Effect.flip(triggers.remove("t-v", { expectedVersion: 1 })))._tag).toBe("VersionConflict")
      expect(yield* triggers.get("t-v")).toMatchObject({ priority: 2, version: 2 })
    }).pipe(Effect.provide(layer))
  )

  it.effect("bad input is refused with every problem listed, and nothing is stored", () =>
    Effect.gen(function* () {
      const triggers = yield* TriggerStore
      const before = yield* rawHash
      const refused = yield* Effect.flip(
        triggers.put({
          id: "bad id!",
          scope: "",
          type: 7,
          subject: "",
          priority: 1.5,
          requirements: { EquipmentRequirements: [{}], Tools: [] },
          enabled: "yes",
          colour: "red"
        })
      )
      expect(refused).toBeInstanceOf(InvalidTrigger)
      const problems = (refused as InvalidTrigger).problems
      expect(problems).toEqual([
        "colour is not a trigger field (id, scope, type, subject, workMasterId, priority, requirements, enabled)",
        `id must start with a letter or digit and hold only letters, digits, '_', '.', '-' (at most 64), got "bad id!"`,
        "scope must be a non-empty text",
        "workMasterId must be a non-empty text",
        "type must be a non-empty text",
        "subject must be a non-empty text",
        "priority must be an integer, got 1.5",
        "requirements.EquipmentRequirements[0].ID must be a non-empty text",
        "requirements.Tools is not a requirement list (EquipmentRequirements, MaterialRequirements, PersonnelRequirements, PhysicalAssetRequirements)",
        `enabled must be true or false, got "yes"`
      ])
      expect((yield* Effect.flip(triggers.put("not an object"))).message).toContain("a trigger must be an object")
      expect(yield* rawHash).toEqual(before)
    }).pipe(Effect.provide(layer))
  )

  it.live("every write publishes nudge:triggers with the edit (trigger, scope, change, its own id, who announces it); a refused one does not", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const triggers = yield* TriggerStore
        const nudges = yield* Nudges
        const heard = yield* Queue.unbounded<string>()
        yield* nudges.listen("triggers", "trigger-test", { onNudge: (scope) => Queue.offerUnsafe(heard, scope) })
        yield* triggers.put(row("t-n", { scope: "cell-9" }))
        yield* Effect.exit(triggers.put({ id: "t-n" }))
        yield* triggers.disable("t-n", { announced: true })
        yield* triggers.remove("t-n")
        const messages = yield* until(Queue.size(heard), (n) => n >= 3, { what: "three nudges" }).pipe(Effect.andThen(Queue.takeAll(heard)))
        const edits = [...messages].map(parseTriggerEdit)
        expect(edits.map((e) => e && [e.id, e.scope, e.change, e.version, e.announced])).toEqual([
          ["t-n", "cell-9", "put", 1, false],
          ["t-n", "cell-9", "put", 2, true],
          ["t-n", "cell-9", "delete", undefined, false]
        ])
        expect(new Set(edits.map((e) => e?.edit)).size).toBe(3)
      })
    ).pipe(Effect.provide(layer))
  )

  it.effect("an edit's announcement is claimed once: the first claim gets it, every later one does not", () =>
    Effect.gen(function* () {
      const triggers = yield* TriggerStore
      const claims = yield* Effect.all([triggers.claimAnnouncement("edit-1"), triggers.claimAnnouncement("edit-1"), triggers.claimAnnouncement("edit-2")], { concurrency: 3 })
      expect(claims.filter((c, i) => i < 2 && c)).toHaveLength(1)
      expect(claims[2]).toBe(true)
      expect(yield* triggers.claimAnnouncement("edit-1")).toBe(false)
      expect(parseTriggerEdit("cell-9")).toBeUndefined()
      expect(parseTriggerEdit(JSON.stringify({ id: "t", scope: "s", change: "move", edit: "e", announced: false }))).toBeUndefined()
    }).pipe(Effect.provide(layer))
  )

  it.effect("a row that is no longer readable is listed as unreadable, not dropped silently", () =>
    Effect.gen(function* () {
      const valkey = yield* Valkey
      const triggers = yield* TriggerStore
      const key = yield* valkey.key("triggers", {})
      yield* unsafeCommand(valkey, "hset", (c) => c.hset(key, "t-broken", "{not json"))
      const { unreadable } = yield* triggers.list
      expect(unreadable).toContainEqual({ id: "t-broken", problems: ["the stored row is not JSON"] })
      yield* unsafeCommand(valkey, "hdel", (c) => c.hdel(key, "t-broken"))
      expect(Exit.isSuccess(yield* Effect.exit(triggers.list))).toBe(true)
    }).pipe(Effect.provide(layer))
  )
})
