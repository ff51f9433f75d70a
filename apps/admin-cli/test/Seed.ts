import { Effect, Layer, Result } from "effect"
import { encodeJobOrderRecord, type JobOrder, JobStates, type JobState, makeJobResponse } from "@microdcs/job-state"
import { encodeOutboxEntry } from "@microdcs/sfc-runtime"
import { RECIPE_SCHEMA_ID, start, validateRecipe } from "@microdcs/sfc"
import {
  DedupeStore,
  JobAcceptanceDao,
  JobOrderDao,
  JobResponseDao,
  PublisherCursors,
  PublisherLease,
  ReferenceListDao,
  SfcStateDao,
  StartLease,
  storeLayer,
  Valkey,
  ValkeyStreams,
  WorkMasterDao
} from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"

/**
 * A small island written through the store's own DAOs, so the CLI reads exactly what the
 * daemon would have written. Not a test file: the test files seed their own prefix with it.
 */

export const SCOPE = "line-1"
export const OTHER_SCOPE = "line-2"
export const RETENTION_MS = 7 * 24 * 3600 * 1000

/** A valid recipe: two steps, one push command. */
export const recipe = {
  Steps: [{ Name: "Init", Initial: true }, { Name: "Work" }, { Name: "Done" }],
  Transitions: [
    { Source: "Init", Target: "Work", Condition: "true" },
    { Source: "Work", Target: "Done", Condition: "true" }
  ],
  Actions: [{ Name: "tighten", Step: "Work", Qualifier: "N", Interaction: "push_command", TypeId: "com.example.tighten.v1", TimeoutSeconds: 30 }]
}

export const workMaster = (id: string, data: unknown = recipe) => ({ ID: id, Description: `work master ${id}`, dataschema: RECIPE_SCHEMA_ID, data })

/** The same recipe with two problems: an unsupported qualifier and a transition to nowhere. */
export const brokenWorkMaster = (id: string) =>
  workMaster(id, {
    ...recipe,
    Transitions: [...recipe.Transitions, { Source: "Done", Target: "Nowhere", Condition: "true" }],
    Actions: [{ ...recipe.Actions[0], Qualifier: "X" }]
  })

const jobOrder = (id: string, priority: number): JobOrder => ({
  JobOrderID: id,
  Priority: priority,
  WorkMasterID: [{ ID: "wm-1" }],
  EquipmentRequirements: [{ ID: "eq-1" }]
})

/** Puts a job order through the states it passed, one change entry per method, as job control does. */
const putJobOrder = (scope: string, id: string, priority: number, moves: ReadonlyArray<readonly [string, JobState]>, retire = false) =>
  Effect.gen(function* () {
    const dao = yield* JobOrderDao
    let version = 0
    for (const [i, [change, state]] of moves.entries()) {
      const last = i === moves.length - 1
      const written = yield* dao.put({
        id, scope, doc: encodeJobOrderRecord(jobOrder(id, priority), state), priority, expectedVersion: version, change,
        ...(retire && last ? { retainMs: RETENTION_MS } : {})
      })
      version = written.version
    }
  })

const putResponse = (scope: string, id: string, orderId: string, state: string, startTime: number, doc: object) =>
  Effect.flatMap(JobResponseDao, (dao) => dao.put({ id, scope, orderId, state, startTime, doc: JSON.stringify(doc), expectedVersion: 0, change: "ResultUpdate" }))

/** Job responses in each form a reader meets: one that does not decode, the previous release's (v1), the current (v2). */
export const responseDocs = (t0: number) => ({
  damaged: { ID: "jr-2", JobOrderID: "jo-2", StartTime: new Date(t0 + 2000).toISOString() },
  v1: { ID: "jr-3", JobOrderID: "jo-3", StartTime: new Date(t0 + 3000).toISOString(), EndTime: new Date(t0 + 3500).toISOString(), JobState: "Ended_Completed", Data: { torque: 86 } },
  v2: makeJobResponse({ responseId: "jr-4", jobOrderId: "jo-4", startTime: t0 + 4000, endTime: t0 + 4500, state: JobStates.Ended_Completed, data: { torque: 85 }, jobOrder: jobOrder("jo-4", 2) })
})

/** The start time the seeded responses count from. */
export const RESPONSE_T0 = 1_700_000_000_000

const orders = Effect.gen(function* () {
  yield* putJobOrder(SCOPE, "jo-1", 5, [["Store", JobStates.NotAllowedToStart_Ready], ["Start", JobStates.AllowedToStart_Ready]])
  yield* putJobOrder(SCOPE, "jo-2", 7, [["StoreAndStart", JobStates.AllowedToStart_Ready], ["Run", JobStates.Running]])
  yield* putJobOrder(SCOPE, "jo-3", 1, [["StoreAndStart", JobStates.AllowedToStart_Ready], ["Run", JobStates.Running], ["Stop", JobStates.Ended_Completed], ["Clear", JobStates.EndState]], true)
  yield* putJobOrder(SCOPE, "jo-4", 2, [["StoreAndStart", JobStates.AllowedToStart_Ready], ["Run", JobStates.Running], ["Complete", JobStates.Ended_Completed]])
  yield* putJobOrder(OTHER_SCOPE, "jo-9", 3, [["Store", JobStates.NotAllowedToStart_Ready]])
  const t0 = RESPONSE_T0
  const docs = responseDocs(t0)
  yield* putResponse(SCOPE, "jr-2", "jo-2", "Running", t0 + 2000, docs.damaged)
  yield* putResponse(SCOPE, "jr-3", "jo-3", "Ended_Completed", t0 + 3000, docs.v1)
  yield* putResponse(SCOPE, "jr-4", "jo-4", "Ended_Completed", t0 + 4000, docs.v2)
})

const configuration = Effect.gen(function* () {
  const references = yield* ReferenceListDao
  yield* references.add("equipment", SCOPE, ["eq-1", "eq-2"])
  yield* references.add("personnel", SCOPE, ["op-1"])
  yield* (yield* JobAcceptanceDao).set(SCOPE, 10)
  const workMasters = yield* WorkMasterDao
  yield* workMasters.put({ id: "wm-1", scope: SCOPE, doc: JSON.stringify(workMaster("wm-1")), expectedVersion: -1 })
  yield* workMasters.put({ id: "wm-plain", scope: SCOPE, doc: JSON.stringify({ ID: "wm-plain", Description: "no recipe" }), expectedVersion: -1 })
})

/**
 * The execution of jo-2 as the engine starts it, its work entries read by a consumer (two
 * pending), one of them dead-lettered; a change-stream group that has read nothing (lag).
 */
const execution = Effect.gen(function* () {
  const recipeValue = validateRecipe(recipe)
  if (Result.isFailure(recipeValue)) return yield* Effect.die(new Error("the seed recipe is invalid"))
  const out = start({ jobId: "jo-2", scope: SCOPE, workMasterId: "wm-1", recipe: recipeValue.success }, Date.now())
  yield* (yield* SfcStateDao).compareAndSet({
    jobId: "jo-2", scope: SCOPE, expectedVersion: 0, doc: JSON.stringify(out.state),
    entries: [...out.outbox.map((e) => encodeOutboxEntry(e, 1)), { type: "tick", jobId: "jo-2" }],
    due: out.due, active: out.active, waitsAdd: out.waitsAdd, waitsRemove: out.waitsRemove
  })
  const valkey = yield* Valkey
  const streams = yield* ValkeyStreams
  const work = yield* valkey.key("sfcWork", { scope: SCOPE })
  const changes = yield* valkey.key("changes", { scope: SCOPE })
  yield* streams.ensureGroup(work, "engine")
  yield* streams.ensureGroup(changes, "engine-changes")
  const [batch] = yield* streams.readGroup({ streams: [work], group: "engine", consumer: "engine-a", count: 100 })
  const first = batch!.entries[0]!
  yield* streams.deadLetter({
    stream: work, deadLetter: yield* streams.deadLetterKey("sfc", SCOPE), group: "engine", consumer: "engine-a", id: first.id, error: "station unreachable"
  })
})

const runtime = Effect.gen(function* () {
  const dedupe = yield* DedupeStore
  yield* dedupe.claim("urn:mes", "evt-1", "tok-1", 600_000)
  yield* dedupe.claim("urn:mes", "evt-2", "tok-2", 600_000)
  yield* dedupe.markDone("urn:mes", "evt-2", "tok-2", 600_000)
  // Done with the reply kept for duplicates.
  yield* dedupe.claim("urn:mes", "evt-3", "tok-3", 600_000)
  yield* dedupe.markDone("urn:mes", "evt-3", "tok-3", 600_000, JSON.stringify({ ReturnStatus: 1 }))
  yield* (yield* PublisherLease).acquire("publisher-a", 600_000)
  yield* (yield* StartLease).acquire("cfg-1", "host-a", 600_000)
  const valkey = yield* Valkey
  const changes = yield* valkey.key("changes", { scope: SCOPE })
  const [firstChange] = yield* unsafeCommand(valkey, "first change", (c) => c.xrange(changes, "-", "+", "COUNT", 1))
  yield* (yield* PublisherCursors).set(SCOPE, firstChange![0])
})

/** Seeds a fresh island under `prefix`. */
export const seedIsland = (url: string, prefix: string): Promise<void> =>
  Effect.runPromise(
    Effect.all([configuration, orders, execution, runtime], { discard: true }).pipe(Effect.provide(storeLayer({ url, prefix })))
  )

/** Runs a store effect against the island (for the tests' own checks of what changed). */
export const withStore = <A, E>(url: string, prefix: string, effect: Effect.Effect<A, E, Layer.Success<ReturnType<typeof storeLayer>>>) =>
  Effect.runPromise(effect.pipe(Effect.provide(storeLayer({ url, prefix }))))
