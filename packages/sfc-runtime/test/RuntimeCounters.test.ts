import { describe, expect, it } from "@effect/vitest"
import { Effect, Ref } from "effect"
import { SfcEvents } from "@microdcs/sfc-runtime"
import { counterWorld, setCounter } from "./CounterKit.js"
import { engineWorld, putJobOrder, putWorkMaster } from "./RuntimeFixtures.js"
import {
  executionOf,
  jobOrderFor,
  linearRecipe,
  pull,
  push,
  recipeWorkMaster,
  SCOPE,
  stepJson,
  transition,
  untilExecution,
  responseSummary,
  untilResponse
} from "./RuntimeKit.js"

/**
 * Counters in recipe conditions through the runtime, against the real server: the counter source
 * is a plain Valkey hash (CounterKit.ts), the search-key value comes from the step's results
 * (`tool`), else from the job order's equipment.
 */

/** Tighten, then Pack below three NOK results of the tool in the last hour, else Inspect. */
const nokRecipe = (tighten: object) => ({
  Steps: [stepJson("Tighten", true), stepJson("Pack"), stepJson("Inspect")],
  Transitions: [transition("Tighten", "Pack", "counter.nok_1h < 3", 1), transition("Tighten", "Inspect", "counter.nok_1h >= 3", 2)],
  Actions: [tighten, push("pack", "Pack"), push("inspect", "Inspect")]
})

const sent = (log: { readonly commands: ReadonlyArray<{ readonly jobId: string; readonly action: string }> }, jobId: string) =>
  log.commands.filter((c) => c.jobId === jobId).map((c) => c.action)

describe("SFC runtime: counters in transition conditions", () => {
  it.live("goes to Pack below the limit, and to Inspect once the source says 3", () => {
    const tools: Record<string, object> = { "jo-below": { tool: "nr-3" }, "jo-at": { tool: "nr-3" } }
    const { layer, world, station } = counterWorld({ onCommand: (command) => ({ data: command.action === "tighten" ? tools[command.jobId] : {} }) })
    return Effect.gen(function* () {
      yield* setCounter("nok_1h", "nr-3", 2)
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-nok", nokRecipe(push("tighten", "Tighten"))))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-below", "wm-nok"))
      expect(responseSummary(yield* untilResponse("jo-below"))).toMatchObject({ state: "Ended_Completed", data: { tighten: { tool: "nr-3" }, pack: {} } })
      expect(sent(station, "jo-below")).toEqual(["tighten", "pack"])
      expect(world.requests).toEqual([
        {
          scope: SCOPE,
          jobOrderId: "jo-below",
          source: "Tighten",
          counters: ["nok_1h"],
          results: { tighten: { tool: "nr-3" } },
          jobOrder: expect.objectContaining({ JobOrderID: "jo-below" })
        }
      ])

      yield* setCounter("nok_1h", "nr-3", 3)
      yield* putJobOrder(SCOPE, jobOrderFor("jo-at", "wm-nok"))
      expect(responseSummary(yield* untilResponse("jo-at"))).toMatchObject({ state: "Ended_Completed", data: { inspect: {} } })
      expect(sent(station, "jo-at")).toEqual(["tighten", "inspect"])
      expect(world.requests).toHaveLength(2)

      // A recipe without counters never asks the source.
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-plain", linearRecipe(["A", "B"], [push("a", "A"), push("b", "B")])))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-plain", "wm-plain"))
      expect(responseSummary(yield* untilResponse("jo-plain"))).toMatchObject({ state: "Ended_Completed" })
      expect(world.requests).toHaveLength(2)
    }).pipe(Effect.provide(layer))
  })

  it.live("takes the search-key value from the job order when the results have none", () => {
    const { layer, world } = counterWorld({})
    return Effect.gen(function* () {
      yield* setCounter("nok_1h", "nr-7", 5)
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-equipment", nokRecipe(push("tighten", "Tighten"))))
      yield* putJobOrder(SCOPE, { ...jobOrderFor("jo-equipment", "wm-equipment"), EquipmentRequirement: [{ EquipmentID: "nr-7" }] })
      expect(responseSummary(yield* untilResponse("jo-equipment"))).toMatchObject({ state: "Ended_Completed", data: { inspect: {} } })
      expect(world.requests[0]?.jobOrder).toMatchObject({ EquipmentRequirement: [{ EquipmentID: "nr-7" }] })
    }).pipe(Effect.provide(layer))
  })

  it.live("a failing source moves nothing: the event is refused with CounterUnavailable and applies once the source is back", () => {
    const { layer, world } = counterWorld({})
    const event = { scope: SCOPE, source: "urn:test:station", id: "tighten-1", type: "com.example.tighten.v1", jobId: "jo-retry", data: { tool: "nr-3" } }
    return Effect.gen(function* () {
      yield* setCounter("nok_1h", "nr-3", 0)
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-retry", nokRecipe(pull("tighten", "Tighten", { TimeoutSeconds: 3600 }))))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-retry", "wm-retry"))
      const waiting = yield* untilExecution("jo-retry", (s) => s.actions.some((r) => r.action === "tighten" && r.state === "waiting"))
      const events = yield* SfcEvents

      yield* Ref.set(world.failing, true)
      const refused = yield* Effect.flip(events.ingest(event))
      expect(refused).toMatchObject({ _tag: "CounterUnavailable", message: "the journal is unreachable" })
      expect(world.requests).toHaveLength(1)
      const after = yield* executionOf("jo-retry")
      expect(after?.version).toBe(waiting.version)
      expect(after?.state.active.map((a) => a.step)).toEqual(["Tighten"])

      // The binding redelivers the same event: now it applies, once.
      yield* Ref.set(world.failing, false)
      expect(yield* events.ingest(event)).toEqual({ _tag: "Applied", jobId: "jo-retry" })
      expect(responseSummary(yield* untilResponse("jo-retry"))).toMatchObject({ state: "Ended_Completed", data: { tighten: { tool: "nr-3" }, pack: {} } })
      expect(yield* events.ingest(event)).toEqual({ _tag: "Duplicate", jobId: "jo-retry" })
    }).pipe(Effect.provide(layer))
  })

  it.live("a counter the source has no value for fails the job, naming the counter", () => {
    const { layer } = counterWorld({ onCommand: () => ({ data: {} }) })
    return Effect.gen(function* () {
      // No tool in the results and no equipment in the job order: the source leaves the counter out.
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-unknown", nokRecipe(push("tighten", "Tighten"))))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-unknown", "wm-unknown"))
      const response = responseSummary(yield* untilResponse("jo-unknown"))
      expect(response).toMatchObject({ state: "Aborted" })
      expect(response.error).toBe("transition out of Tighten: counter nok_1h has no value (the counter source has no value for it)")
    }).pipe(Effect.provide(layer))
  })

  it.live("without a counter source, a job whose transition names a counter fails saying so", () => {
    const world = engineWorld({ onCommand: () => ({ data: { tool: "nr-3" } }) })
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-nosource", nokRecipe(push("tighten", "Tighten"))))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-nosource", "wm-nosource"))
      const response = responseSummary(yield* untilResponse("jo-nosource"))
      expect(response).toMatchObject({ state: "Aborted" })
      expect(String(response.error)).toContain("counter nok_1h has no value (no counter source is configured)")
    }).pipe(Effect.provide(world.layer))
  })
})
