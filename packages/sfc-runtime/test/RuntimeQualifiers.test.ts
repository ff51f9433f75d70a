import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { JobOrderTransitions } from "@microdcs/sfc-runtime"
import { eventually } from "@microdcs/test-utils"
import { engineWorld, putJobOrder, putWorkMaster } from "./RuntimeFixtures.js"
import { executionOf, jobOrderFor, push, recipeWorkMasterV11, responseSummary, SCOPE, stepJson, transition, untilExecution, untilResponse } from "./RuntimeKit.js"

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

/** Heat (heater stored) → Work, whose command the station never answers: the job runs until the MES ends it. */
const endedByMesRecipe = {
  Steps: [stepJson("Heat", true), stepJson("Work")],
  Transitions: [transition("Heat", "Work")],
  Actions: [push("heater", "Heat", { Qualifier: "S", Stop: off("heater") }), push("load", "Heat"), push("work", "Work")]
}

describe("SFC runtime: action qualifiers (v1.1.0)", () => {
  const endings: ReadonlyArray<{ readonly name: string; readonly methods: ReadonlyArray<"Pause" | "Stop" | "Abort"> }> = [
    { name: "Stop of a running job", methods: ["Stop"] },
    { name: "Abort of a running job", methods: ["Abort"] },
    { name: "Abort of a paused job", methods: ["Pause", "Abort"] }
  ]
  it.live.each(endings)("the MES's $name sends the Stop of every stored command still on", ({ methods }) => {
    const { layer, station } = engineWorld({ onCommand: (c) => (c.action === "work" ? "silent" : { data: {} }) })
    const method = methods.at(-1)!
    const jobId = `jo-mes-${methods.join("-").toLowerCase()}`
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMasterV11(`wm-${jobId}`, endedByMesRecipe))
      yield* putJobOrder(SCOPE, jobOrderFor(jobId, `wm-${jobId}`))
      yield* eventually(Effect.sync(() => (sent(station, jobId).includes("work:com.example.work.v1") ? true : undefined)))
      for (const m of methods) {
        expect((yield* (yield* JobOrderTransitions).apply(jobId, m))._tag).toBe("Applied")
        if (m === "Pause") yield* untilExecution(jobId, (s) => s.status === "paused")
      }
      yield* untilExecution(jobId, (s) => s.status === (method === "Stop" ? "stopped" : "aborted"))
      const commands = yield* eventually(Effect.sync(() => {
        const all = sent(station, jobId)
        return all.includes("heater:com.example.heater-off.v1") ? all : undefined
      }))
      expect(commands).toEqual(["heater:com.example.heater.v1", "load:com.example.load.v1", "work:com.example.work.v1", "heater:com.example.heater-off.v1"])
      // Sent once: neither the outbox entry nor a later sweep sends it again.
      yield* Effect.sleep("300 millis")
      expect(sent(station, jobId).filter((c) => c.endsWith("heater-off.v1"))).toHaveLength(1)
    }).pipe(Effect.provide(layer))
  })

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
