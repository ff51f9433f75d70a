import { describe, expect, it } from "@effect/vitest"
import { type Context, Effect, Exit } from "effect"
import fc from "fast-check"
import { type JobOrderDao, SfcStateDao } from "@microdcs/store"
import { Executions } from "@microdcs/sfc-runtime"
import { engineWorld, putJobOrder, putWorkMaster } from "./RuntimeFixtures.js"
import { executionOf, jobOrderFor, linearRecipe, pull, recipeWorkMaster, SCOPE, untilExecution } from "./RuntimeKit.js"

/**
 * Seeded fuzz of the engine's loop against the real server: batches of events, with redeliveries,
 * handed in side by side while another writer moves the jobs under the loop's cache. Whatever
 * the interleaving, every distinct event is applied exactly once, in the order of the job's steps,
 * and a redelivered one changes nothing.
 */

const TICK = "com.example.fuzz.tick.v1"
const STEPS = ["A", "B", "C", "D"]
const recipe = linearRecipe(STEPS, STEPS.map((step) => pull(step.toLowerCase(), step, { TypeId: TICK })))
const JOBS = 3
const SEED = 2312

/** One delivery: which job, which of its events (ids repeat: redeliveries), or a foreign write to the job. */
type Delivery = { readonly job: number; readonly event: number } | { readonly job: number; readonly bump: true }
const delivery = fc.oneof(
  { weight: 6, arbitrary: fc.record({ job: fc.nat(JOBS - 1), event: fc.nat(5) }) },
  { weight: 1, arbitrary: fc.record({ job: fc.nat(JOBS - 1), bump: fc.constant(true as const) }) }
)
const batches = fc.array(fc.array(delivery, { minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 6 })

type Services = Executions | SfcStateDao | JobOrderDao

/** Another writer rewrites the job's state unchanged: the loop's cached version is stale after it. */
const bump = (jobId: string) =>
  Effect.gen(function* () {
    const states = yield* SfcStateDao
    const stored = yield* states.get(jobId)
    yield* states
      .compareAndSet({ jobId, scope: SCOPE, expectedVersion: stored.version, doc: stored.doc, entries: [], due: null, active: true, waitsAdd: [], waitsRemove: [] })
      .pipe(Effect.ignore)
  })

/** One fuzz run: fresh jobs, every batch handed in at once, all batches side by side. */
const runOnce = (run: number, plan: ReadonlyArray<ReadonlyArray<Delivery>>) =>
  Effect.gen(function* () {
    const jobIds = Array.from({ length: JOBS }, (_, j) => `jo-fuzz-${run}-${j}`)
    for (const jobId of jobIds) yield* putJobOrder(SCOPE, jobOrderFor(jobId, "wm-fuzz"))
    for (const jobId of jobIds) yield* untilExecution(jobId, (s) => s.actions.some((a) => a.action === "a" && a.state === "waiting"))
    const executions = yield* Executions
    const written = new Map<string, number>()
    yield* Effect.forEach(plan, (batch) => Effect.gen(function* () {
      const events = batch.flatMap((d) => ("event" in d ? [d] : []))
      for (const d of batch) if ("bump" in d) yield* bump(jobIds[d.job]!)
      const exits = yield* executions.applyAll(events.map((d) => ({
        jobId: jobIds[d.job]!,
        input: { type: "event" as const, eventType: TICK, data: { id: `e${d.event}` } },
        appliedEvent: { source: "urn:test:fuzz", id: `${jobIds[d.job]}-e${d.event}` }
      })))
      exits.forEach((exit, i) => {
        expect(Exit.isSuccess(exit)).toBe(true)
        if (Exit.isSuccess(exit) && exit.value._tag === "Written") {
          const key = `${events[i]!.job}|${events[i]!.event}`
          written.set(key, (written.get(key) ?? 0) + 1)
        }
      })
    }), { concurrency: "unbounded", discard: true })
    for (const [j, jobId] of jobIds.entries()) {
      const state = (yield* executionOf(jobId))!.state
      const applied = Object.values(state.results).map((r) => (r as { readonly id: string }).id)
      const distinct = new Set(plan.flat().flatMap((d) => ("event" in d && d.job === j ? [`e${d.event}`] : [])))
      // Each distinct event once (as many as there are steps), none twice; each written answer is one result.
      expect(new Set(applied).size).toBe(applied.length)
      expect(applied.length).toBe(Math.min(distinct.size, STEPS.length))
      for (const id of applied) expect(written.get(`${j}|${id.slice(1)}`)).toBe(1)
      expect([...written.keys()].filter((k) => k.startsWith(`${j}|`)).length).toBe(applied.length)
    }
  })

describe("SFC runtime: the engine's loop under seeded fuzz", () => {
  it.live("redeliveries and foreign writes in random batches: every event applied exactly once", () =>
    Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-fuzz", recipe))
      const context: Context.Context<Services> = yield* Effect.context<Services>()
      let run = 0
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(batches, (plan) => Effect.runPromise(Effect.provide(runOnce(run++, plan), context))),
          { seed: SEED, numRuns: 30 }
        )
      )
    }).pipe(Effect.provide(engineWorld({}).layer)), { timeout: 120_000 })
})
