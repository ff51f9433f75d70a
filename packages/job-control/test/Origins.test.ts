import { describe, expect, it } from "@effect/vitest"
import { Effect, Result, Layer, Option } from "effect"
import { decodeJobOrderRecord, decodeOrigin } from "@microdcs/job-state"
import { Executions, InProcessStation, SfcEngineProcesses, SfcRuntimeServices } from "@microdcs/sfc-runtime"
import { RECIPE_SCHEMA_ID } from "@microdcs/sfc"
import { ChangeStream, decodeNode, ExecutionLogStore, JobOrderDao, type NodeRecord } from "@microdcs/store"
import { eventually, randomPrefix } from "@microdcs/test-utils"
import { putWorkMaster, testStore, untilJobOrderIs } from "@microdcs/testkit"
import { jobControlLayer } from "@microdcs/job-control"
import { handle, handleOk, methodRequest } from "./Kit.js"

/**
 * Issue 21: an operator's Abort from the CLI was logged as "aborted by the MES", and a Pause from
 * the CLI looked like one from the MES in the history. Every write of a job-control method names
 * who sent it (the MES by its CloudEvent source unless the request says otherwise, an operator
 * as `cli:alice@host`): in the change entry, the job order record and the execution log node.
 */

const SCOPE = "line-origins"
const MES = "urn:test:mes"

/** A job that waits for an event no station sends: it stays Running, to be paused and aborted. */
const waitingWorkMaster = {
  ID: "wm-wait",
  dataschema: RECIPE_SCHEMA_ID,
  data: {
    Steps: [{ Name: "Wait", Initial: true }],
    Transitions: [],
    Actions: [{ Name: "await", Step: "Wait", Qualifier: "N", Interaction: "pull_event", TypeId: "com.example.never.v1", TimeoutSeconds: 600 }]
  }
}

/** The processor and an engine with its log on, over one store. */
const island = () =>
  Layer.mergeAll(jobControlLayer(), ExecutionLogStore.Default).pipe(
    Layer.provideMerge(SfcEngineProcesses({ consumer: "origins" }).pipe(Layer.provideMerge(InProcessStation().layer), Layer.provideMerge(SfcRuntimeServices))),
    Layer.provideMerge(testStore({ prefix: randomPrefix("origins") }))
  )

/** The job's change entries with their decoded origin, oldest first. */
const history = (jobId: string) =>
  Effect.map(Effect.flatMap(ChangeStream, (c) => c.read(SCOPE, { count: 1000 })), (page) =>
    page.entries.filter((e) => e.id === jobId).map((e) => ({ change: e.change, origin: decodeOrigin(e.origin) }))
  )

/** The nodes of the job's execution in Valkey, once one of `kind` is there. */
const untilNode = (jobId: string, kind: NodeRecord["kind"]) =>
  eventually(
    Effect.gen(function* () {
      const execution = yield* Effect.flatMap(Executions, (e) => e.load(jobId))
      const executionId = Option.getOrUndefined(execution)?.state.log?.executionId
      if (executionId === undefined) return undefined
      const nodes = yield* Effect.flatMap(ExecutionLogStore, (log) => log.readNodes(executionId, 0, 100))
      const decoded = nodes.flatMap((n) => Result.getOrElse(Result.map(decodeNode(n.key, n.value), (r) => [r]), () => []))
      return decoded.find((n) => n.kind === kind)
    })
  )

const recordOrigin = (jobId: string) =>
  Effect.map(Effect.flatMap(JobOrderDao, (dao) => dao.get(jobId)), (stored) => Result.getOrThrow(decodeJobOrderRecord(stored.doc)).origin)

const start = (jobId: string) =>
  Effect.gen(function* () {
    yield* handleOk(methodRequest("StoreAndStart", SCOPE, { JobOrder: { JobOrderID: jobId, WorkMasterID: [{ ID: waitingWorkMaster.ID }] } }))
    yield* untilJobOrderIs(jobId, "Running")
  })

describe("the origin of job-control writes", () => {
  it.live("an MES Pause names the MES source in the history, the record and the pause node", () =>
    Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, waitingWorkMaster)
      yield* start("jo-mes")
      yield* handleOk(methodRequest("Pause", SCOPE, { JobOrderID: "jo-mes", Comment: "shift change" }))
      const pause = yield* untilNode("jo-mes", "pause")
      expect(pause.detail).toEqual({ by: `mes:${MES}`, comment: "shift change" })
      expect(yield* recordOrigin("jo-mes")).toEqual({ kind: "mes", id: MES, comment: "shift change" })
      expect(yield* history("jo-mes")).toEqual([
        { change: "StoreAndStart", origin: { kind: "mes", id: MES } },
        { change: "Run", origin: { kind: "engine", id: "sfc" } },
        { change: "Pause", origin: { kind: "mes", id: MES, comment: "shift change" } }
      ])
    }).pipe(Effect.provide(island()))
  )

  it.live("an operator's Abort names the operator, not the MES: history, record, error node and the job's error", () =>
    Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, waitingWorkMaster)
      yield* start("jo-cli")
      const operator = { kind: "cli", id: "alice@host" } as const
      const aborted = yield* handle({ ...methodRequest("Abort", SCOPE, { JobOrderID: "jo-cli" }), origin: operator })
      expect(aborted.statusEvents.map((e) => e.state)).toEqual(["Aborted"])
      const error = yield* untilNode("jo-cli", "error")
      expect(error).toMatchObject({ name: "aborted", detail: { error: "aborted by cli:alice@host", by: "cli:alice@host" } })
      const execution = Option.getOrThrow(yield* Effect.flatMap(Executions, (e) => e.load("jo-cli")))
      expect(execution.state).toMatchObject({ status: "aborted", error: "aborted by cli:alice@host" })
      expect(yield* recordOrigin("jo-cli")).toEqual(operator)
      expect((yield* history("jo-cli")).at(-1)).toEqual({ change: "Abort", origin: operator })
      yield* untilJobOrderIs("jo-cli", "Aborted")
    }).pipe(Effect.provide(island()))
  )
})
