import { Effect } from "effect"
import { expect, layer } from "@effect/vitest"
import { MethodEventTypes, ReturnStatus } from "@microdcs/job-state"
import { type BadRequestKind, ERROR_REPLY_TYPE, type JobControlRequest } from "@microdcs/job-control"
import { configRequest, handle, handleOk, methodRequest, queryRequest, request, snapshot, world } from "./Kit.js"

const S = "bad"

/** Requests that must each be answered INVALID_REQUEST with the given error kind, writing nothing. */
const badRequests: ReadonlyArray<readonly [string, JobControlRequest, BadRequestKind]> = [
  ["an unknown type", request("com.example.whatever.v1", S, {}), "UnknownType"],
  ["a method type of the wrong version", request("org.opcfoundation.ISA95-JOBCONTROL_V2.Store.v1", S, {}), "UnknownType"],
  ["an internal trigger as a type", request("org.opcfoundation.ISA95-JOBCONTROL_V2.Run.v2", S, { JobOrderID: "x" }), "UnknownType"],
  ["no subject", request(MethodEventTypes.Start, undefined, { JobOrderID: "x" }), "MissingSubject"],
  ["an empty scope", request(MethodEventTypes.Start, "/line", { JobOrderID: "x" }), "MissingSubject"],
  ["no data", methodRequest("Store", S, undefined), "MissingField"],
  ["data that is a string", methodRequest("Store", S, '{"JobOrder":{}}'), "MalformedPayload"],
  ["data that is a list", methodRequest("Start", S, [{ JobOrderID: "x" }]), "MalformedPayload"],
  ["Store without JobOrder", methodRequest("Store", S, { JobOrderID: "x" }), "MissingField"],
  ["a JobOrder that is not an object", methodRequest("StoreAndStart", S, { JobOrder: "x" }), "MalformedPayload"],
  ["a JobOrder without JobOrderID", methodRequest("Store", S, { JobOrder: { Priority: 1 } }), "MalformedPayload"],
  ["an empty JobOrderID", methodRequest("Store", S, { JobOrder: { JobOrderID: "" } }), "MalformedPayload"],
  ["a JobOrderID over the key-part limit", methodRequest("Store", S, { JobOrder: { JobOrderID: "x".repeat(513) } }), "MalformedPayload"],
  ["a Priority that is text", methodRequest("Store", S, { JobOrder: { JobOrderID: "x", Priority: "high" } }), "MalformedPayload"],
  ["WorkMasterID not a list", methodRequest("Update", S, { JobOrder: { JobOrderID: "x", WorkMasterID: "wm" } }), "MalformedPayload"],
  ["an equipment requirement without ID", methodRequest("Store", S, { JobOrder: { JobOrderID: "x", EquipmentRequirements: [{}] } }), "MalformedPayload"],
  ["material requirements not a list", methodRequest("Store", S, { JobOrder: { JobOrderID: "x", MaterialRequirements: { MaterialClassID: "m" } } }), "MalformedPayload"],
  ["a MaterialClassID that is a number", methodRequest("Store", S, { JobOrder: { JobOrderID: "x", MaterialRequirements: [{ MaterialClassID: 7 }] } }), "MalformedPayload"],
  ["a JobOrder that cannot be JSON", methodRequest("Store", S, { JobOrder: { JobOrderID: "x", Quantity: 10n } }), "MalformedPayload"],
  ["a Comment that is a number", methodRequest("Store", S, { JobOrder: { JobOrderID: "x" }, Comment: 5 }), "MalformedPayload"],
  ["Start without JobOrderID", methodRequest("Start", S, { Comment: "go" }), "MissingField"],
  ["a JobOrderID that is a number", methodRequest("Abort", S, { JobOrderID: 42 }), "MalformedPayload"],
  ["a JobOrderID with a tab (no broker takes it in a topic)", methodRequest("Store", S, { JobOrder: { JobOrderID: "jo-\tx" } }), "MalformedPayload"],
  ["a JobOrderID with a C1 control", methodRequest("Start", S, { JobOrderID: "jo-\u0085" }), "MalformedPayload"],
  ["an equipment id with a NUL", configRequest("equipment", S, { ID: "e\u0000" }), "MalformedPayload"],
  ["a query by id without JobOrderID", queryRequest("RequestJobResponseByJobOrderID", S, {}), "MissingField"],
  ["a query by state without state", queryRequest("RequestJobResponseByJobOrderState", S, {}), "MissingField"],
  ["a query by an unknown state", queryRequest("RequestJobResponseByJobOrderState", S, { JobOrderState: "Finished" }), "MalformedPayload"],
  ["a query by a state list without texts", queryRequest("RequestJobResponseByJobOrderState", S, { JobOrderState: [{ StateNumber: 5 }] }), "MalformedPayload"],
  ["a query with a bad cursor", queryRequest("RequestJobResponseByJobOrderState", S, { JobOrderState: "Aborted", Cursor: 3 }), "MalformedPayload"],
  ["a query with page size 0", queryRequest("RequestJobResponseByJobOrderState", S, { JobOrderState: "Aborted", PageSize: 0 }), "MalformedPayload"],
  ["a config method that is neither PUT nor DELETE", configRequest("equipment", S, { ID: "e" }, "PATCH"), "InvalidMethod"],
  ["an empty equipment list", configRequest("equipment", S, []), "MalformedPayload"],
  ["an equipment entry without ID", configRequest("equipment", S, [{ ID: "e1" }, { Name: "e2" }]), "MissingField"],
  ["a material class named by ID", configRequest("materialclass", S, { ID: "m" }), "MissingField"],
  ["a personnel entry that is a string", configRequest("personnel", S, ["p1"]), "MalformedPayload"],
  ["a work master without ID", configRequest("workmaster", S, { Description: "x" }), "MissingField"],
  ["a work master DELETE without data", configRequest("workmaster", S, undefined, "DELETE"), "MissingField"],
  ["a negative limit", configRequest("jobacceptance", S, { Limit: -1 }), "MalformedPayload"],
  ["a limit as text", configRequest("jobacceptance", S, { Limit: "3" }), "MalformedPayload"],
  ["a limit PUT without Limit", configRequest("jobacceptance", S, {}), "MissingField"]
]

layer(world({}, { maxDocumentBytes: 2048 }))("bad input", (it) => {
  // Something in every family the requests could touch, so "nothing written" is a real check.
  const seed = Effect.gen(function* () {
    yield* handleOk(configRequest("equipment", S, { ID: "e0" }))
    yield* handleOk(configRequest("workmaster", S, { ID: "wm0" }))
    yield* handleOk(configRequest("jobacceptance", S, { Limit: 10 }))
    yield* handleOk(methodRequest("Store", S, { JobOrder: { JobOrderID: "x", WorkMasterID: [{ ID: "wm0" }] } }))
  })

  it.effect("every malformed request is INVALID_REQUEST with its error kind and changes nothing", () =>
    Effect.gen(function* () {
      yield* seed
      for (const [what, req, kind] of badRequests) {
        const before = yield* snapshot
        const result = yield* handle(req)
        expect(result.reply.status, what).toBe(ReturnStatus.INVALID_REQUEST)
        expect(result.reply.data, what).toMatchObject({ ReturnStatus: ReturnStatus.INVALID_REQUEST })
        expect(result.reply.error?.kind, `${what}: ${result.reply.error?.message}`).toBe(kind)
        expect(result.reply.error?.message.length, what).toBeGreaterThan(0)
        expect(result.statusEvents, what).toEqual([])
        expect(yield* snapshot, what).toEqual(before)
      }
    })
  )

  it.effect("an unknown type is answered with the generic error reply type; a known one with its own", () =>
    Effect.gen(function* () {
      expect((yield* handle(request("com.example.whatever.v1", S, {}))).reply.type).toBe(ERROR_REPLY_TYPE)
      expect((yield* handle(methodRequest("Start", S, {}))).reply.type).toBe("org.opcfoundation.ISA95-JOBCONTROL_V2.StartResponse.v2")
    })
  )

  it.effect("a document the store refuses (over its size limit) is INVALID_REQUEST and changes nothing", () =>
    Effect.gen(function* () {
      const before = yield* snapshot
      const big = yield* handle(methodRequest("Store", S, { JobOrder: { JobOrderID: "big", Description: "y".repeat(4096) } }))
      expect(big.reply).toMatchObject({ status: ReturnStatus.INVALID_REQUEST, error: { kind: "InvalidInput" } })
      const update = yield* handle(methodRequest("Update", S, { JobOrder: { JobOrderID: "x", Description: "y".repeat(4096) } }))
      expect(update.reply).toMatchObject({ status: ReturnStatus.INVALID_REQUEST, error: { kind: "InvalidInput" } })
      const workMaster = yield* handle(configRequest("workmaster", S, { ID: "wm-big", Description: "y".repeat(4096) }))
      expect(workMaster.reply).toMatchObject({ status: ReturnStatus.INVALID_REQUEST, error: { kind: "InvalidInput" } })
      expect(yield* snapshot).toEqual(before)
    })
  )
})
