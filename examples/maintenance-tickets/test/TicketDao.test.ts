import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { Valkey } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { IndexReadHook } from "@microdcs/store/testing"
import { type PutTicket, TicketDao } from "../src/index.js"
import { doc, raw, snapshot, ticketIsland, ticketSchema } from "./Island.js"

// The extension's DAO against a real server: what makeDocumentDao gives, and its own method.
const island = ticketIsland()

const ticketKey = (id: string) => Effect.map(ticketSchema, (keys) => keys.key("ticket", { id }) as string)
const statusSet = (scope: string, status: "open" | "assigned" | "closed") =>
  Effect.map(ticketSchema, (keys) => keys.key("ticketByStatus", { scope, status }) as string)

describe("TicketDao", () => {
  it.effect("puts, gets, lists, deletes and checks outcomes, with the store's typed errors", () =>
    Effect.gen(function* () {
      const tickets = yield* TicketDao
      const first = yield* tickets.put({ id: "t1", scope: "press-1", status: "open", severity: 2, doc: doc({ title: "leak" }), expectedVersion: 0 })
      expect(first.version).toBe(1)
      expect(yield* tickets.get("t1")).toMatchObject({ id: "t1", scope: "press-1", version: 1, op: first.op, status: "open", severity: 2 })
      yield* tickets.put({ id: "t2", scope: "press-1", status: "open", severity: 1, doc: doc({}), expectedVersion: 0 })
      yield* tickets.put({ id: "t3", scope: "press-1", status: "closed", severity: 5, doc: doc({}), expectedVersion: 0 })

      // Most urgent first; paged.
      expect(yield* tickets.list("press-1", { count: 2 })).toEqual({ items: ["t2", "t1"], next: 2 })
      expect(yield* tickets.list("press-1", { offset: 2 })).toEqual({ items: ["t3"], next: null })
      expect(yield* tickets.byStatus("press-1", "open")).toEqual(["t1", "t2"])
      expect((yield* tickets.getMany(["t3", "missing", "t1"])).map((t) => t.id)).toEqual(["t3", "t1"])

      // A put reads the stored status, so the ticket leaves its old by-status set.
      const second = yield* tickets.put({ id: "t1", scope: "press-1", status: "closed", severity: 3, doc: doc({ title: "leak", fixed: true }), expectedVersion: 1 })
      expect(second.version).toBe(2)
      expect(yield* tickets.byStatus("press-1", "open")).toEqual(["t2"])
      expect(yield* tickets.byStatus("press-1", "closed")).toEqual(["t1", "t3"])
      expect(yield* tickets.outcome("t1", first.op)).toEqual(Option.some(1))
      expect(yield* tickets.outcome("t1", "never-sent")).toEqual(Option.none())

      const key = yield* ticketKey("t1")
      expect(yield* Effect.flip(tickets.put({ id: "t1", scope: "press-1", status: "open", severity: 1, doc: doc({}), expectedVersion: 0 }))).toMatchObject({
        _tag: "VersionConflict", key, expected: 0, actual: 2
      })
      expect(yield* Effect.flip(tickets.put({ id: "t1", scope: "press-2", status: "open", severity: 1, doc: doc({}), expectedVersion: -1 }))).toMatchObject({
        _tag: "ScopeConflict", storedScope: "press-1", requestedScope: "press-2"
      })

      expect((yield* tickets.delete({ id: "t1", expectedVersion: 2 })).version).toBe(2)
      expect(yield* tickets.byStatus("press-1", "closed")).toEqual(["t3"])
      expect(yield* tickets.list("press-1")).toEqual({ items: ["t2", "t3"], next: null })
      expect(yield* Effect.flip(tickets.get("t1"))).toMatchObject({ _tag: "NotFound", message: "ticket t1 does not exist" })
      expect((yield* Effect.flip(tickets.delete({ id: "t1" })))._tag).toBe("NotFound")
    }).pipe(Effect.provide(island))
  )

  it.effect("changeStatus moves the ticket between its by-status sets and leaves the document text alone", () =>
    Effect.gen(function* () {
      const tickets = yield* TicketDao
      yield* tickets.put({ id: "c1", scope: "press-3", status: "open", severity: 2, doc: doc({ title: "belt" }), expectedVersion: 0 })
      const moved = yield* tickets.changeStatus({ id: "c1", status: "assigned", expectedVersion: 1 })
      expect(moved.version).toBe(2)
      expect(yield* tickets.get("c1")).toMatchObject({ version: 2, op: moved.op, status: "assigned", doc: doc({ title: "belt" }) })
      expect([yield* tickets.byStatus("press-3", "open"), yield* tickets.byStatus("press-3", "assigned")]).toEqual([[], ["c1"]])
      // Its change entry (kind "ticket") is what the op check finds.
      expect(yield* tickets.outcome("c1", moved.op)).toEqual(Option.some(2))

      expect(yield* Effect.flip(tickets.changeStatus({ id: "c1", status: "closed", expectedVersion: 1 }))).toMatchObject({
        _tag: "VersionConflict", expected: 1, actual: 2
      })
      expect(yield* Effect.flip(tickets.changeStatus({ id: "nope", status: "closed" }))).toMatchObject({
        _tag: "NotFound", message: "ticket nope does not exist"
      })
    }).pipe(Effect.provide(island))
  )

  it.effect("a status that moves between changeStatus's read and its script is read again; one that keeps moving is StateMoved", () =>
    Effect.gen(function* () {
      const tickets = yield* TicketDao
      const valkey = yield* Valkey
      yield* tickets.put({ id: "m1", scope: "press-4", status: "open", severity: 1, doc: doc({}), expectedVersion: 0 })
      const key = yield* ticketKey("m1")
      // Another writer assigns the ticket right after the DAO's read (with no hook of its own).
      const assign = tickets
        .changeStatus({ id: "m1", status: "assigned" })
        .pipe(Effect.provideService(IndexReadHook, { afterRead: () => Effect.void }), Effect.orDie, Effect.asVoid)
      const onceAfterRead = { afterRead: (read: string, attempt: number) => (read === key && attempt === 1 ? assign : Effect.void) }
      const closed = yield* tickets.changeStatus({ id: "m1", status: "closed" }).pipe(Effect.provideService(IndexReadHook, onceAfterRead))
      expect(closed.version).toBe(3)
      expect([yield* tickets.byStatus("press-4", "open"), yield* tickets.byStatus("press-4", "assigned"), yield* tickets.byStatus("press-4", "closed")]).toEqual([[], [], ["m1"]])

      let n = 0
      const flip = (read: string) =>
        read === key ? unsafeCommand(valkey, "flip", (c) => c.hset(key, "status", ++n % 2 === 0 ? "open" : "assigned")).pipe(Effect.orDie, Effect.asVoid) : Effect.void
      const always = tickets.changeStatus({ id: "m1", status: "closed" }).pipe(Effect.provideService(IndexReadHook, { afterRead: flip }))
      expect(yield* Effect.flip(always)).toMatchObject({ _tag: "StateMoved", key, attempts: 5 })
    }).pipe(Effect.provide(island))
  )

  it.effect("bad input is InvalidInput naming the field, and nothing is written", () =>
    Effect.gen(function* () {
      const tickets = yield* TicketDao
      yield* tickets.put({ id: "base", scope: "press-5", status: "open", severity: 1, doc: doc({}), expectedVersion: 0 })
      const good: PutTicket = { id: "b1", scope: "press-5", status: "open", severity: 1, doc: doc({}), expectedVersion: 0 }
      const before = yield* snapshot
      const refusals: ReadonlyArray<readonly [string, Effect.Effect<unknown, { readonly _tag: string }>]> = [
        ["id", tickets.put({ ...good, id: "" })],
        ["scope", tickets.put({ ...good, scope: "x".repeat(600) })],
        ["status", tickets.put({ ...good, status: "lost" as "open" })],
        ["severity", tickets.put({ ...good, severity: 9 })],
        ["severity", tickets.put({ ...good, severity: 1.5 })],
        ["doc", tickets.put({ ...good, doc: "{not json" })],
        ["expectedVersion", tickets.put({ ...good, expectedVersion: -2 })],
        ["status", tickets.changeStatus({ id: "base", status: "lost" as "open" })],
        ["expectedVersion", tickets.changeStatus({ id: "base", status: "closed", expectedVersion: 0.5 })],
        ["id", tickets.changeStatus({ id: "", status: "closed" })],
        ["status", tickets.byStatus("press-5", "lost" as "open")],
        ["id", tickets.get("")],
        ["count", tickets.list("press-5", { count: Number.NaN })]
      ]
      for (const [field, call] of refusals) expect(yield* Effect.flip(call), field).toMatchObject({ _tag: "InvalidInput", field })
      expect(yield* snapshot).toEqual(before)
    }).pipe(Effect.provide(island))
  )

  it.effect("a key of another type is WrongType, and nothing changes", () =>
    Effect.gen(function* () {
      const tickets = yield* TicketDao
      yield* tickets.put({ id: "w1", scope: "press-6", status: "open", severity: 1, doc: doc({}), expectedVersion: 0 })
      const assigned = yield* statusSet("press-6", "assigned")
      yield* raw((c) => c.set(assigned, "planted"))
      const before = yield* snapshot
      expect(yield* Effect.flip(tickets.changeStatus({ id: "w1", status: "assigned" }))).toMatchObject({ _tag: "WrongType", key: assigned, expected: "set", actual: "string" })
      expect(yield* Effect.flip(tickets.byStatus("press-6", "assigned"))).toMatchObject({ _tag: "WrongType", key: assigned })
      expect(yield* Effect.flip(tickets.put({ id: "w2", scope: "press-6", status: "assigned", severity: 1, doc: doc({}), expectedVersion: 0 }))).toMatchObject({ _tag: "WrongType", key: assigned })
      expect(yield* snapshot).toEqual(before)
    }).pipe(Effect.provide(island))
  )
})
