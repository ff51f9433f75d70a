import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { JobOrderDao, JobOrderSearch, Valkey } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { defaultEngineOptions, sweepOnce } from "@microdcs/sfc-runtime"
import { engineWorld, eventually, putJobOrder, putWorkMaster } from "./RuntimeFixtures.js"
import {
  dueScore,
  executionOf,
  jobOrderFor,
  linearRecipe,
  pull,
  push,
  recipeWorkMaster,
  SCOPE,
  untilJobOrderIs,
  responseSummary,
  untilResponse
} from "./RuntimeKit.js"

/** Deadlines: resends with one correlation id, failure after the last send, and outage grace. */

describe("SFC runtime: timeouts", () => {
  it.live("a silent station gets the command three times with one correlation id, then the job fails", () => {
    const world = engineWorld({ onCommand: () => "silent" })
    const recipe = linearRecipe(["Probe", "After"], [push("probe", "Probe", { TimeoutSeconds: 0.3 }), push("after", "After")])
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-silent", recipe))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-silent", "wm-silent"))
      const silent = yield* untilResponse("jo-silent")
      expect(silent.JobOrderID).toBe("jo-silent")
      const response = responseSummary(silent)
      expect(response.state).toBe("Aborted")
      expect(response.error).toEqual(expect.stringContaining("probe"))
      expect(response.error).toEqual(expect.stringContaining("3 sends"))
      yield* untilJobOrderIs("jo-silent", "Aborted")
      // The failure is the job order's comment on its Abort: a search by error text finds it.
      const record = JSON.parse((yield* Effect.flatMap(JobOrderDao, (dao) => dao.get("jo-silent"))).doc) as { Comment?: string }
      expect(record.Comment).toBe(response.error)
      const found = yield* Effect.flatMap(JobOrderSearch, (s) => s.search({ scopes: [SCOPE], errorText: "3 SENDS" })).pipe(Effect.provide(JobOrderSearch.Default))
      expect(found.items).toMatchObject([{ id: "jo-silent", state: "Aborted", error: response.error }])
      const sends = world.station.commands
      expect(sends.map((c) => c.action)).toEqual(["probe", "probe", "probe"])
      expect(sends.map((c) => c.attempt)).toEqual([1, 2, 3])
      expect(new Set(sends.map((c) => c.correlationId)).size).toBe(1)
      const execution = yield* executionOf("jo-silent")
      expect(execution?.state.status).toBe("failed")
      expect(yield* dueScore(SCOPE, "jo-silent")).toBeNull()
    }).pipe(Effect.provide(world.layer))
  })

  it.live("a pull event that never comes fails the job once its deadline passes", () => {
    const world = engineWorld({})
    const recipe = linearRecipe(["Wait"], [pull("scan", "Wait", { TimeoutSeconds: 0.2 })])
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-noevent", recipe))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-noevent", "wm-noevent"))
      const response = responseSummary(yield* untilResponse("jo-noevent"))
      expect(response).toMatchObject({ state: "Aborted" })
      expect(response.error).toEqual(expect.stringContaining("scan"))
      yield* untilJobOrderIs("jo-noevent", "Aborted")
      expect(world.station.commands).toEqual([])
    }).pipe(Effect.provide(world.layer))
  })

  it.live("after an outage (aged heartbeat) a deadline inside the outage moves back instead of firing", () => {
    // No sweep of its own: the test runs the one sweep that matters.
    const world = engineWorld({ onCommand: () => "silent" }, { roles: { engine: true, sweep: false } })
    const recipe = linearRecipe(["Probe"], [push("probe", "Probe", { TimeoutSeconds: 0.2 })])
    const options = { ...defaultEngineOptions, outageThresholdMs: 10_000 }
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-outage", recipe))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-outage", "wm-outage"))
      yield* eventually(Effect.sync(() => world.station.commands[0]))
      const before = yield* executionOf("jo-outage")
      const deadline = before!.state.actions[0]!.deadline!
      // Let the deadline pass: without the outage it would fire (resend) on the next sweep.
      yield* Effect.sleep(`${Math.max(0, deadline - Date.now()) + 30} millis`)
      const valkey = yield* Valkey
      const heartbeat = valkey.keys.key("sfcHeartbeat", {}) as string
      const aged = Date.now() - 60_000
      yield* unsafeCommand(valkey, "age heartbeat", (c) => c.set(heartbeat, String(aged)))

      expect(yield* sweepOnce(options)).toBe(0)

      const after = yield* executionOf("jo-outage")
      const action = after!.state.actions[0]!
      expect(action).toMatchObject({ state: "dispatched", attempts: 1 })
      const moved = action.deadline! - deadline
      expect(moved).toBeGreaterThanOrEqual(60_000)
      expect(moved).toBeLessThan(62_000)
      expect(yield* dueScore(SCOPE, "jo-outage")).toBe(action.deadline)
      expect(Number(yield* unsafeCommand(valkey, "heartbeat", (c) => c.get(heartbeat)))).toBeGreaterThan(aged + 59_000)
      // The next sweep sees a fresh heartbeat: nothing moves, nothing is due, nothing is resent.
      expect(yield* sweepOnce(options)).toBe(0)
      expect((yield* executionOf("jo-outage"))!.state.actions[0]!.deadline).toBe(action.deadline)
      expect(world.station.commands).toHaveLength(1)
    }).pipe(Effect.provide(world.layer))
  })
})
