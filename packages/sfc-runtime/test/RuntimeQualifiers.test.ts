import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { eventually } from "@microdcs/test-utils"
import { engineWorld, putJobOrder, putWorkMaster } from "./RuntimeFixtures.js"
import { executionOf, jobOrderFor, push, recipeWorkMasterV11, responseSummary, SCOPE, stepJson, transition, untilResponse } from "./RuntimeKit.js"

/**
 * The v1.1.0 qualifiers through the runtime, against the real server and the in-process station:
 * a stored command stopped by a reset in a later step, one stopped at the job's end, and a delayed
 * command sent by the timer sweep, whose reply moves its waiting step on.
 */

const sent = (log: { readonly commands: ReadonlyArray<{ readonly jobId: string; readonly action: string; readonly typeId: string }> }, jobId: string) =>
  log.commands.filter((c) => c.jobId === jobId).map((c) => `${c.action}:${c.typeId}`)

const off = (name: string) => ({ TypeId: `com.example.${name}-off.v1`, Parameters: { on: false } })

/** Heat (heater and vent stored) → Work → Cool (resets the heater); the vent is still on at the end. */
const storedRecipe = {
  Steps: [stepJson("Heat", true), stepJson("Work"), stepJson("Cool")],
  Transitions: [transition("Heat", "Work"), transition("Work", "Cool")],
  Actions: [
    push("heater", "Heat", { Qualifier: "S", Stop: off("heater") }),
    push("vent", "Heat", { Qualifier: "S", Stop: off("vent") }),
    push("load", "Heat"),
    push("work", "Work"),
    push("heaterOff", "Cool", { Qualifier: "R", Resets: "heater", TypeId: off("heater").TypeId }),
    push("cool", "Cool")
  ]
}

/** Wait sends its horn 300 ms after entry and goes on when the horn answers ok. */
const delayedRecipe = {
  Steps: [stepJson("Wait", true), stepJson("Done")],
  Transitions: [transition("Wait", "Done", "horn.ok")],
  Actions: [push("horn", "Wait", { Qualifier: "D", Delay: "300ms" }), push("done", "Done")]
}

describe("SFC runtime: action qualifiers (v1.1.0)", () => {
  it.live("S is sent once and stays on until the R of a later step sends its Stop; a command still on is stopped at the job's end", () => {
    const { layer, station } = engineWorld({})
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMasterV11("wm-stored", storedRecipe))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-stored", "wm-stored"))
      expect(responseSummary(yield* untilResponse("jo-stored"))).toMatchObject({ state: "Ended_Completed" })
      // The end's Stop goes out after the write that ended the job (from its outbox): wait for it.
      const commands = yield* eventually(Effect.sync(() => {
        const all = sent(station, "jo-stored")
        return all.includes("vent:com.example.vent-off.v1") ? all : undefined
      }))
      expect(commands.filter((c) => c.startsWith("heater"))).toEqual(["heater:com.example.heater.v1", "heaterOff:com.example.heater-off.v1"])
      expect(commands.indexOf("heaterOff:com.example.heater-off.v1")).toBeGreaterThan(commands.indexOf("work:com.example.work.v1"))
      expect(commands.filter((c) => c.startsWith("vent"))).toEqual(["vent:com.example.vent.v1", "vent:com.example.vent-off.v1"])
      expect(commands.at(-1)).toBe("vent:com.example.vent-off.v1")
      expect(station.commands.find((c) => c.typeId === "com.example.vent-off.v1")?.parameters).toEqual({ on: false })
    }).pipe(Effect.provide(layer))
  })

  it.live("D is sent by the timer sweep when its Delay ends; its reply moves the waiting step on", () => {
    const { layer, station } = engineWorld({ onCommand: (c) => ({ data: c.action === "horn" ? { ok: true } : {} }) })
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMasterV11("wm-delayed", delayedRecipe))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-delayed", "wm-delayed"))
      expect(responseSummary(yield* untilResponse("jo-delayed"))).toMatchObject({ state: "Ended_Completed", data: { horn: { ok: true }, done: {} } })
      expect(sent(station, "jo-delayed")).toEqual(["horn:com.example.horn.v1", "done:com.example.done.v1"])
      const wait = (yield* executionOf("jo-delayed"))!.state.history.find((h) => h.step === "Wait")!
      expect(wait.leftAt! - wait.enteredAt).toBeGreaterThanOrEqual(300)
    }).pipe(Effect.provide(layer))
  })
})
