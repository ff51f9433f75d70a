import { Effect } from "effect"
import { expect, layer } from "@effect/vitest"
import { ReturnStatus } from "@microdcs/job-state"
import { handle, handleOk, methodRequest, request, world } from "./Kit.js"

// A holder that crashed after its write landed but before the dedupe done mark: once the claim
// lapses the same request (same source and id) is processed again, and must get its first answer.
const S = "replay"

layer(world())("a request processed again after its write landed", (it) => {
  it.effect("Store again: the first answer (NO_ERROR), not 'already exists'; one write", () =>
    Effect.gen(function* () {
      const first = methodRequest("StoreAndStart", S, { JobOrder: { JobOrderID: "jo-r1" } })
      const answer = yield* handleOk(first)
      const again = yield* handle(first)
      expect(again.reply.status).toBe(ReturnStatus.NO_ERROR)
      expect(again.reply.data).toEqual(answer.reply.data)
      expect(again.statusEvents.map((e) => [e.state, e.version])).toEqual(answer.statusEvents.map((e) => [e.state, e.version]))
      // A different request for the same id is still refused.
      const other = yield* handle(methodRequest("Store", S, { JobOrder: { JobOrderID: "jo-r1" } }))
      expect(other.reply.status).toBe(ReturnStatus.UNABLE_TO_ACCEPT_JOB_ORDER)
    })
  )

  it.effect("a state method again, after later moves: NO_ERROR, not 'not allowed in this state'; nothing moves", () =>
    Effect.gen(function* () {
      yield* handleOk(methodRequest("Store", S, { JobOrder: { JobOrderID: "jo-r2" } }))
      const start = methodRequest("Start", S, { JobOrderID: "jo-r2" })
      yield* handleOk(start)
      yield* handleOk(methodRequest("RevokeStart", S, { JobOrderID: "jo-r2" }))
      yield* handleOk(methodRequest("Abort", S, { JobOrderID: "jo-r2" }))
      const again = yield* handle(start)
      expect(again.reply.status).toBe(ReturnStatus.NO_ERROR)
      expect(again.statusEvents).toEqual([])
      // A fresh Start of the aborted job is refused as before.
      const fresh = yield* handle(request(start.type, S, { JobOrderID: "jo-r2" }))
      expect(fresh.reply.status).toBe(ReturnStatus.INVALID_JOB_ORDER_STATUS)
    })
  )
})
