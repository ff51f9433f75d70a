import { readFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Ajv2020 } from "ajv/dist/2020.js"
import { type JobOrder, JobStates, toStoredState } from "@microdcs/job-state"
import { SfcStateDao } from "@microdcs/store"
import { Executions } from "@microdcs/sfc-runtime"
import { engineWorld, fixture, putJobOrder, putWorkMaster } from "./RuntimeFixtures.js"
import { responseSummary, storedResponseOf, untilJobOrderIs, untilResponse } from "./RuntimeKit.js"

const workMaster = fixture("work-master-axle.json")
const jobOrder = fixture("job-order.json") as unknown as JobOrder
const ajv = new Ajv2020({ strict: true, allErrors: true })
const isJobResponse = ajv.compile(JSON.parse(readFileSync(new URL("../../../docs/schemas/job-response/v2.0.0/schema.json", import.meta.url), "utf8")))

describe("SFC runtime", () => {
  it.live("runs the axle recipe end to end, with one rework loop", () => {
    let torqueChecks = 0
    const world = engineWorld({
      onCommand: (command) => ({ data: { done: command.action } }),
      events: {
        "com.example.station.qa.v1": () => ({ passed: true }),
        // The first torque check fails, the second passes: one rework loop.
        "com.example.station.torque.v1": () => ({ torque_ok: ++torqueChecks > 1, torque: 84 + torqueChecks })
      }
    })
    return Effect.gen(function* () {
      yield* putWorkMaster("line-1", workMaster)
      yield* putJobOrder("line-1", jobOrder)
      const result = yield* untilResponse(jobOrder.JobOrderID)
      expect(responseSummary(result).data["verify"]).toEqual({ torque_ok: true, torque: 86 })
      // As stored: the v2 form (OPC 10031-4 ISA95JobResponseDataType), the job order's requirements as its actuals.
      const stored = yield* storedResponseOf(jobOrder.JobOrderID)
      expect(isJobResponse(stored), ajv.errorsText(isJobResponse.errors)).toBe(true)
      expect(stored).toEqual(result)
      expect(stored).toMatchObject({
        JobResponseID: "jo-axle-0001-response",
        JobOrderID: "jo-axle-0001",
        JobState: toStoredState(JobStates.Ended_Completed),
        PersonnelActuals: [{ ID: "operator-12" }],
        EquipmentActuals: [{ ID: "station-7" }],
        PhysicalAssetActuals: [{ ID: "nutrunner-3" }],
        MaterialActuals: [{ MaterialClassID: "axle", MaterialDefinitionID: "axle-front-a2" }]
      })
      expect(stored).not.toHaveProperty("Description")
      expect(yield* untilJobOrderIs(jobOrder.JobOrderID, "Ended_Completed")).toBe("Ended_Completed")
      const actions = world.station.commands.map((c) => c.action)
      expect(actions.filter((a) => a === "position")).toHaveLength(1)
      expect(actions.filter((a) => a === "tighten")).toHaveLength(1)
      expect(actions.filter((a) => a === "retighten")).toHaveLength(1)
      const execution = yield* Effect.flatMap(Executions, (e) => e.load(jobOrder.JobOrderID))
      expect(execution._tag === "Some" && execution.value.state.status).toBe("completed")
      expect(execution._tag === "Some" && execution.value.state.visits["VerifyTorque"]).toBe(2)
      const states = yield* SfcStateDao
      expect(yield* states.listActive("line-1")).toEqual([])
    }).pipe(Effect.provide(world.layer))
  })
})
