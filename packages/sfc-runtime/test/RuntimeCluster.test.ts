import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SfcStateDao, Valkey } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { randomPrefix } from "@microdcs/test-utils"
import { testStore } from "@microdcs/testkit"
import type { CommandEntry } from "@microdcs/sfc"
import { SfcEngineProcesses, SfcRuntimeServices, StationPort, type StationScript } from "@microdcs/sfc-runtime"
import { engineWorld, eventually, putJobOrder, putWorkMaster, testEngineOptions } from "./RuntimeFixtures.js"
import {
  changeEntries,
  countChanges,
  executionOf,
  jobOrderFor,
  linearRecipe,
  observer,
  push,
  recipeWorkMaster,
  SCOPE,
  startInstance,
  stepJson,
  transition,
  untilJobOrderIs,
  responseSummary,
  untilResponse
} from "./RuntimeKit.js"

/** Several engine instances on one island: one prefix, one consumer group, different consumers. */

const answerAll: StationScript = { onCommand: (c) => ({ data: { done: c.action } }) }

/** The work stream's outbox entries of `type`, as `jobId` per entry. */
const outboxJobIds = (type: string) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const key = yield* valkey.key("sfcWork", { scope: SCOPE })
    const raw = (yield* unsafeCommand(valkey, "xrange", (c) => c.xrange(key, "-", "+"))) as Array<[string, Array<string>]>
    return raw.flatMap(([, flat]) => {
      const fields = new Map<string, string>()
      for (let i = 0; i + 1 < flat.length; i += 2) fields.set(flat[i]!, flat[i + 1]!)
      return fields.get("type") === type ? [fields.get("jobId")!] : []
    })
  })

/** Every command sent under one correlation id per (job, action, visit): here every visit is 1. */
const expectOneCorrelationPerAction = (commands: ReadonlyArray<CommandEntry>) => {
  const ids = new Map<string, Set<string>>()
  for (const c of commands) ids.set(`${c.jobId}|${c.action}`, (ids.get(`${c.jobId}|${c.action}`) ?? new Set()).add(c.correlationId))
  for (const [action, set] of ids) expect([action, set.size]).toEqual([action, 1])
  return ids
}

describe("SFC runtime: several engine instances", () => {
  it.live("two instances share a batch of 20 jobs: each finishes exactly once, one correlation id per action", () => {
    const prefix = randomPrefix("sfc-pair")
    const a = engineWorld(answerAll, { prefix, engine: { consumer: "engine-a" } })
    const b = engineWorld(answerAll, { prefix, engine: { consumer: "engine-b" } })
    const recipe = {
      Steps: ["Prepare", "Fit", "Tighten", "Check", "Verify"].map((name, i) => stepJson(name, i === 0)),
      Branches: [{ Name: "Par", Type: "simultaneous", Branches: [["Fit", "Tighten"], ["Check"]] }],
      Transitions: [transition("Prepare", "Par"), transition("Par", "Verify")],
      Actions: ["prepare", "fit", "tighten", "check", "verify"].map((name) => push(name, name[0]!.toUpperCase() + name.slice(1)))
    }
    const jobs = Array.from({ length: 20 }, (_, i) => `jo-pair-${String(i).padStart(2, "0")}`)
    return Effect.gen(function* () {
      yield* startInstance(a.layer)
      yield* startInstance(b.layer)
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-pair", recipe))
      yield* Effect.forEach(jobs, (jobId) => putJobOrder(SCOPE, jobOrderFor(jobId, "wm-pair")), { concurrency: 5 })
      const responses = yield* Effect.forEach(jobs, (jobId) => untilResponse(jobId, 20_000), { concurrency: "unbounded" })
      for (const response of responses) expect(responseSummary(response)).toMatchObject({ state: "Ended_Completed" })
      yield* Effect.forEach(jobs, (jobId) => untilJobOrderIs(jobId, "Ended_Completed"), { concurrency: "unbounded" })

      const changes = yield* changeEntries(SCOPE)
      for (const jobId of jobs) {
        expect([jobId, countChanges(changes, `${jobId}-response`, "ResultUpdate")]).toEqual([jobId, 1])
        expect([jobId, countChanges(changes, jobId, "Run"), countChanges(changes, jobId, "Complete")]).toEqual([jobId, 1, 1])
        expect((yield* executionOf(jobId))?.state.status).toBe("completed")
      }
      // Only the write that won the CAS into the terminal status emitted the response entry.
      const responseEntries = yield* outboxJobIds("jobresponse")
      expect([...responseEntries].sort()).toEqual(jobs)

      const commands = [...a.station.commands, ...b.station.commands]
      const ids = expectOneCorrelationPerAction(commands)
      expect(ids.size).toBe(jobs.length * 5)
      expect(yield* Effect.flatMap(SfcStateDao, (s) => s.listActive(SCOPE))).toEqual([])
    }).pipe(Effect.provide(observer(prefix)), Effect.scoped)
  })

  it.live("an instance that dies mid-step leaves its entries pending; the other takes them over and finishes", () => {
    const prefix = randomPrefix("sfc-failover")
    const store = () => testStore({ prefix })
    // Instance A's station link hangs on every send: A dies with those command entries unacknowledged.
    const hung: Array<CommandEntry> = []
    const hangingStation = Layer.succeed(StationPort, { send: (c) => Effect.sync(() => hung.push(c)).pipe(Effect.andThen(Effect.never)) })
    const fast = { ...testEngineOptions, claimIdleMs: 500, claimIntervalMs: 200 }
    const a = SfcEngineProcesses({ ...fast, consumer: "engine-a", shutdownGraceMs: 0 }).pipe(
      Layer.provideMerge(hangingStation),
      Layer.provideMerge(SfcRuntimeServices),
      Layer.provideMerge(store())
    )
    const b = engineWorld(answerAll, { prefix, engine: { ...fast, consumer: "engine-b" } })
    // A deadline far beyond the takeover: the commands reach the station through the claim, not a resend.
    const recipe = linearRecipe(["Fit", "Tighten"], [push("fit", "Fit", { TimeoutSeconds: 20 }), push("tighten", "Tighten")])
    const jobs = Array.from({ length: 6 }, (_, i) => `jo-failover-${i}`)
    return Effect.gen(function* () {
      const instanceA = yield* startInstance(a)
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-failover", recipe))
      yield* Effect.forEach(jobs, (jobId) => putJobOrder(SCOPE, jobOrderFor(jobId, "wm-failover")))
      yield* eventually(Effect.sync(() => (hung.length > 0 ? hung.length : undefined)))

      yield* startInstance(b.layer)
      yield* instanceA.stop

      const responses = yield* Effect.forEach(jobs, (jobId) => untilResponse(jobId, 15_000), { concurrency: "unbounded" })
      for (const response of responses) expect(responseSummary(response)).toMatchObject({ state: "Ended_Completed", data: { fit: { done: "fit" } } })
      // Every command A was stuck on went out from B, under the same correlation id, on its first attempt.
      for (const stuck of hung) {
        expect(b.station.commands.filter((c) => c.correlationId === stuck.correlationId).map((c) => c.attempt)).toContain(1)
      }
      expectOneCorrelationPerAction([...hung, ...b.station.commands])
      const changes = yield* changeEntries(SCOPE)
      for (const jobId of jobs) expect([jobId, countChanges(changes, `${jobId}-response`, "ResultUpdate")]).toEqual([jobId, 1])
    }).pipe(Effect.provide(observer(prefix)), Effect.scoped)
  })
})
