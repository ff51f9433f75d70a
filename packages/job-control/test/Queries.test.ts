import { Effect, Result } from "effect"
import { expect, layer } from "@effect/vitest"
import { decodeJobResponse, fromNormalizedName, JobStates, makeJobResponse, ReturnStatus, toStoredState } from "@microdcs/job-state"
import { JobResponseDao } from "@microdcs/store"
import { handle, handleOk, jobOrderTtl, methodRequest, putJobOrderInState, queryRequest, world } from "./Kit.js"

const S = "q"

const store = (scope: string, jobId: string, state: string, doc: unknown) =>
  Effect.flatMap(JobResponseDao, (dao) =>
    dao.put({ id: `${jobId}-response`, scope, orderId: jobId, state, startTime: 1, doc: JSON.stringify(doc), expectedVersion: -1 })
  )

/** A job response as the SFC engine writes it (v2), stored directly; the document is returned. */
const putResponse = (scope: string, jobId: string, state: string) => {
  const doc = makeJobResponse({ responseId: `${jobId}-response`, jobOrderId: jobId, startTime: 1, endTime: 2, state: Result.getOrThrow(fromNormalizedName(state)), data: { torque: 85 } })
  return Effect.as(store(scope, jobId, state, doc), doc)
}

/** A job response as the previous release's engine wrote it (v1), stored directly; the v2 document a reader gives for it is returned. */
const putOldResponse = (scope: string, jobId: string, state: string) => {
  const doc = { ID: `${jobId}-response`, JobOrderID: jobId, StartTime: "1970-01-01T00:00:00.001Z", EndTime: "1970-01-01T00:00:00.002Z", JobState: state, Data: { torque: 85 } }
  return Effect.as(store(scope, jobId, state, doc), Result.getOrThrow(decodeJobResponse(doc)))
}

const byId = (scope: string, JobOrderID: string) => handle(queryRequest("RequestJobResponseByJobOrderID", scope, { JobOrderID }))

layer(world({ retentionMs: 120_000 }))("queries", (it) => {
  it.effect("by job order id: the response of the scope, none yet, or unknown", () =>
    Effect.gen(function* () {
      yield* putJobOrderInState(S, { JobOrderID: "done-1" }, JobStates.Ended_Completed)
      const response = yield* putResponse(S, "done-1", "Ended_Completed")
      const found = yield* byId(`${S}/cell`, "done-1")
      expect(found.reply).toEqual({
        type: "org.opcfoundation.Machinery.Jobs.RequestJobResponseByJobOrderIDResponse.v1",
        data: { ReturnStatus: 1, JobOrderID: "done-1", JobResponse: response },
        status: 1
      })

      yield* putJobOrderInState(S, { JobOrderID: "waiting-1" }, JobStates.AllowedToStart_Ready)
      expect((yield* byId(S, "waiting-1")).reply.data).toEqual({ ReturnStatus: 1, JobOrderID: "waiting-1" })

      const unknown = yield* byId(S, "never-stored")
      expect(unknown.reply.data).toEqual({ ReturnStatus: ReturnStatus.UNKNOWN_JOB_ORDER_ID, JobOrderID: "never-stored" })
      expect(unknown.reply.error?.kind).toBe("UnknownJobOrderId")

      // A response the previous release stored is answered in the current form.
      yield* putJobOrderInState(S, { JobOrderID: "old-1" }, JobStates.Aborted)
      yield* putOldResponse(S, "old-1", "Aborted")
      expect((yield* byId(S, "old-1")).reply.data).toEqual({
        ReturnStatus: 1,
        JobOrderID: "old-1",
        JobResponse: {
          JobResponseID: "old-1-response",
          JobOrderID: "old-1",
          StartTime: "1970-01-01T00:00:00.001Z",
          EndTime: "1970-01-01T00:00:00.002Z",
          JobState: toStoredState(JobStates.Aborted),
          JobResponseData: [{ ID: "torque", Value: 85 }],
          PersonnelActuals: [],
          EquipmentActuals: [],
          PhysicalAssetActuals: [],
          MaterialActuals: []
        }
      })

      // Another scope's job order and response are not visible here.
      yield* putJobOrderInState("other", { JobOrderID: "theirs-1" }, JobStates.Aborted)
      yield* putResponse("other", "theirs-1", "Aborted")
      expect((yield* byId(S, "theirs-1")).reply.status).toBe(ReturnStatus.UNKNOWN_JOB_ORDER_ID)
    })
  )

  it.effect("by state: every response of the scope in that state, page by page, by name or in the OPC UA form", () =>
    Effect.gen(function* () {
      const scope = "paged"
      // Over the set-size where Valkey keeps small sets compact (128): only then does SSCAN page.
      const ids = Array.from({ length: 150 }, (_, i) => `p${String(i).padStart(3, "0")}`)
      // Half of them as the previous release stored them: every reply carries the current form.
      yield* Effect.forEach(ids, (id, i) => (i % 2 === 0 ? putResponse : putOldResponse)(scope, id, "Ended_Completed"), { concurrency: 16 })
      const p6 = yield* putOldResponse(scope, "p6", "Aborted")
      yield* putResponse("paged-other", "p7", "Ended_Completed")

      const seen: Array<string> = []
      let cursor: string | undefined = "0"
      let pages = 0
      while (cursor !== undefined && pages < 500) {
        const result = yield* handle(
          queryRequest("RequestJobResponseByJobOrderState", scope, { JobOrderState: toStoredState(JobStates.Ended_Completed), Cursor: cursor, PageSize: 20 })
        )
        expect(result.reply.data).toMatchObject({ ReturnStatus: 1, JobOrderState: "Ended_Completed" })
        for (const r of result.reply.data["JobResponses"] as ReadonlyArray<{ JobOrderID: string }>) {
          expect(Result.isSuccess(decodeJobResponse(r)) && !("ID" in r)).toBe(true)
          seen.push(r.JobOrderID)
        }
        cursor = result.reply.data["NextCursor"] as string | undefined
        pages++
      }
      expect([...new Set(seen)].sort()).toEqual(ids)
      expect(pages).toBeGreaterThan(1)

      const aborted = yield* handle(queryRequest("RequestJobResponseByJobOrderState", scope, { JobState: "Aborted" }))
      expect(aborted.reply.data).toEqual({
        ReturnStatus: 1,
        JobOrderState: "Aborted",
        JobResponses: [p6]
      })
      const none = yield* handle(queryRequest("RequestJobResponseByJobOrderState", scope, { JobOrderState: "Running" }))
      expect(none.reply.data).toEqual({ ReturnStatus: 1, JobOrderState: "Running", JobResponses: [] })
    })
  )

  it.effect("a stored response that does not decode: refused by id, left out by state", () =>
    Effect.gen(function* () {
      const scope = "damaged"
      yield* putJobOrderInState(scope, { JobOrderID: "bad-1" }, JobStates.Ended_Completed)
      yield* store(scope, "bad-1", "Ended_Completed", { ID: "bad-1-response", JobOrderID: "bad-1", JobState: "Finished" })
      const good = yield* putResponse(scope, "good-1", "Ended_Completed")
      const byOrder = yield* byId(scope, "bad-1")
      expect(byOrder.reply.data).toEqual({ ReturnStatus: ReturnStatus.INVALID_JOB_ORDER_STATUS, JobOrderID: "bad-1" })
      expect(byOrder.reply.error).toEqual({ kind: "MalformedJobResponse", message: "the job response of job order bad-1 does not decode" })
      const byState = yield* handle(queryRequest("RequestJobResponseByJobOrderState", scope, { JobOrderState: "Ended_Completed" }))
      expect(byState.reply.data).toEqual({ ReturnStatus: 1, JobOrderState: "Ended_Completed", JobResponses: [good] })
    })
  )

  it.effect("Clear retires a job order: out of the scope list, kept with a TTL, still answerable", () =>
    Effect.gen(function* () {
      yield* putJobOrderInState(S, { JobOrderID: "retire-1" }, JobStates.Aborted)
      yield* putResponse(S, "retire-1", "Aborted")
      const cleared = yield* handleOk(methodRequest("Clear", S, { JobOrderID: "retire-1" }))
      expect(cleared.statusEvents).toMatchObject([{ jobOrderId: "retire-1", state: "EndState", method: "Clear" }])
      const ttl = yield* jobOrderTtl("retire-1")
      expect(ttl).toBeGreaterThan(0)
      expect(ttl).toBeLessThanOrEqual(120_000)
      expect((yield* byId(S, "retire-1")).reply.data).toMatchObject({ ReturnStatus: 1, JobResponse: { JobOrderID: "retire-1" } })
      // Retired, not gone: no method moves it any more, and its id cannot be stored again yet.
      expect((yield* handle(methodRequest("Clear", S, { JobOrderID: "retire-1" }))).reply.status).toBe(ReturnStatus.INVALID_JOB_ORDER_STATUS)
      expect((yield* handle(methodRequest("Store", S, { JobOrder: { JobOrderID: "retire-1" } }))).reply.status).toBe(
        ReturnStatus.UNABLE_TO_ACCEPT_JOB_ORDER
      )
    })
  )
})
