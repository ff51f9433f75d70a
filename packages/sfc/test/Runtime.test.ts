import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { decodeJobOrderRecord, normalizedName, type JobOrder } from "@microdcs/job-state"
import { JobOrderDao, JobResponseDao, SfcStateDao } from "@microdcs/store"
import { Executions } from "@microdcs/sfc"
import { engineWorld, eventually, fixture, putJobOrder, putWorkMaster } from "./RuntimeFixtures.js"

const workMaster = fixture("work-master-axle.json")
const jobOrder = fixture("job-order.json") as unknown as JobOrder

const jobOrderState = (id: string) =>
  Effect.flatMap(JobOrderDao, (dao) => dao.get(id)).pipe(
    Effect.map((doc) => {
      const decoded = decodeJobOrderRecord(doc.doc)
      return Either.isRight(decoded) ? normalizedName(decoded.right.state) : "malformed"
    })
  )

const response = (id: string) =>
  Effect.flatMap(JobResponseDao, (dao) => dao.get(`${id}-response`)).pipe(
    Effect.map((doc) => JSON.parse(doc.doc) as Record<string, unknown>),
    Effect.option,
    Effect.map((o) => (o._tag === "Some" ? o.value : undefined))
  )

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
      const result = yield* eventually(response(jobOrder.JobOrderID))
      expect(result).toMatchObject({ JobState: "Ended_Completed", JobOrderID: "jo-axle-0001" })
      expect((result["Data"] as Record<string, unknown>)["verify"]).toEqual({ torque_ok: true, torque: 86 })
      expect(yield* eventually(jobOrderState(jobOrder.JobOrderID).pipe(Effect.map((s) => (s === "Ended_Completed" ? s : undefined))))).toBe(
        "Ended_Completed"
      )
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
