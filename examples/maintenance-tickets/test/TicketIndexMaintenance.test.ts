import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { type Inconsistency, IndexMaintenance, IndexRegistry } from "@microdcs/store"
import { indexedFamilies } from "../src/index.js"
import { ticketIsland } from "./Island.js"
import { breakTicketIndexes, repairedContents, seedTickets, ticketIndexContents } from "./TicketIndexes.js"

// The ticket family registered for index maintenance: check reports a broken index, rebuild repairs it.
const island = (registered: typeof indexedFamilies) =>
  Layer.mergeAll(IndexMaintenance.Default.pipe(Layer.provide(IndexRegistry.with(...registered)))).pipe(Layer.provideMerge(ticketIsland()))

const expectReports = (found: ReadonlyArray<Inconsistency>, expected: ReadonlyArray<Partial<Inconsistency>>) => {
  for (const e of expected) expect(found, JSON.stringify(e)).toContainEqual(expect.objectContaining(e))
  expect(found).toHaveLength(expected.length)
}

describe("ticket index maintenance", () => {
  it.effect("a broken ticket index is reported by check() over a registry with the family and repaired by rebuild()", () =>
    Effect.gen(function* () {
      yield* seedTickets
      const maintenance = yield* IndexMaintenance
      expect(maintenance.phases.at(-1)).toBe("ticket")
      expect(yield* maintenance.check()).toEqual([])

      const expected = yield* breakTicketIndexes
      expectReports(yield* maintenance.check(), expected)
      expectReports(yield* maintenance.check({ scope: "press-1" }), expected)
      expect(yield* maintenance.check({ scope: "press-2" })).toEqual([])

      const summary = yield* maintenance.rebuild()
      // t1 back in its set, t2's score; the ghost and t3's stale member removed.
      expect(summary).toMatchObject({ repaired: 2, removed: 2, deletedKeys: [], unrepaired: [] })
      expect(yield* maintenance.check()).toEqual([])
      expect(yield* ticketIndexContents).toEqual(repairedContents)
    }).pipe(Effect.provide(island(indexedFamilies)))
  )

  it.effect("without the registration the core families alone are walked: the breaks go unseen", () =>
    Effect.gen(function* () {
      yield* seedTickets
      yield* breakTicketIndexes
      const maintenance = yield* IndexMaintenance
      expect(maintenance.phases).not.toContain("ticket")
      expect(yield* maintenance.check()).toEqual([])
    }).pipe(Effect.provide(island([])))
  )
})
