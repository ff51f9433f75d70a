import { Effect } from "effect"
import { describe, expect, it } from "@effect/vitest"
import { JobStates } from "@microdcs/job-state"
import { listedJobOrder, listJobOrders } from "@microdcs/job-control"
import { putJobOrderInState, world } from "./Kit.js"

/** A scope's job orders page by page: priority order, the state filter, the cursor, an id on its own. */
const seed = Effect.gen(function* () {
  const order = (id: string, Priority: number) => ({ JobOrderID: id, Priority, WorkMasterID: [{ ID: "wm-1" }] })
  yield* putJobOrderInState("ls", order("jo-c", 1), JobStates.Running)
  yield* putJobOrderInState("ls", order("jo-a", 1), JobStates.NotAllowedToStart_Ready)
  yield* putJobOrderInState("ls", order("jo-b", 9), JobStates.Running)
  yield* putJobOrderInState("ls", order("jo-d", 0), JobStates.AllowedToStart_Ready)
})

const ids = (page: { readonly items: ReadonlyArray<{ readonly id: string }> }) => page.items.map((i) => i.id)

describe("job order listing", () => {
  it.effect("pages in priority order (ties by id) with each document and its state; next goes on where the page ended", () =>
    Effect.gen(function* () {
      yield* seed
      const first = yield* listJobOrders("ls", { offset: 0, limit: 3 })
      expect([ids(first), first.next]).toEqual([["jo-b", "jo-a", "jo-c"], 3])
      expect(first.items.map((i) => [i.listedPriority, i.state, i.stored?.version])).toEqual([[9, "Running", 1], [1, "NotAllowedToStart_Ready", 1], [1, "Running", 1]])
      const rest = yield* listJobOrders("ls", { offset: 3, limit: 3 })
      expect([ids(rest), rest.next]).toEqual([["jo-d"], null])
    }).pipe(Effect.provide(world()))
  )

  it.effect("a state filter reads on until the page is full; the cursor goes on after the last job order looked at", () =>
    Effect.gen(function* () {
      yield* seed
      const running = yield* listJobOrders("ls", { state: "Running", offset: 0, limit: 1 })
      expect([ids(running), running.next]).toEqual([["jo-b"], 1])
      const more = yield* listJobOrders("ls", { state: "Running", offset: running.next!, limit: 5 })
      expect([ids(more), more.next, more.scanned]).toEqual([["jo-c"], null, 3])
    }).pipe(Effect.provide(world()))
  )

  it.effect("one job order by id, with its document's priority; not in the scope is undefined", () =>
    Effect.gen(function* () {
      yield* seed
      expect(yield* listedJobOrder("ls", "jo-b")).toMatchObject({ id: "jo-b", listedPriority: 9, state: "Running" })
      expect(yield* listedJobOrder("other", "jo-b")).toBeUndefined()
      expect(yield* listedJobOrder("ls", "jo-none")).toBeUndefined()
    }).pipe(Effect.provide(world()))
  )
})
