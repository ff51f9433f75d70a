import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Stream } from "effect"
import { MqttConnection, type MqttStatus } from "@microdcs/cloudevents-mqtt"
import { jobControlLayer } from "@microdcs/job-control"
import { JobStates, makeJobResponse, MethodEventTypes, QueryEventTypes, ReturnStatus } from "@microdcs/job-state"
import { JobResponseDao } from "@microdcs/store"
import { randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { JobControlIngress } from "@microdcs/island-mqtt"
import { ingressOptions, islandMqtt, makeMes, SCOPE, storeFor } from "./Kit.js"

/** A reply over the broker's Maximum Packet Size: the MES gets a small error reply naming the sizes, and the island stays connected. */

const LIMIT = 16 * 1024

const jobOrder = (id: string) => ({ JobOrder: { JobOrderID: id, Priority: 1 } })

/** The job response the SFC engine would store for `orderId`, with `bytes` of data. */
const bigResponse = (scope: string, orderId: string, bytes: number) =>
  Effect.flatMap(JobResponseDao, (dao) =>
    dao.put({
      id: `resp-${orderId}`,
      scope,
      orderId,
      state: "Ended_Completed",
      startTime: 1,
      doc: JSON.stringify(
        makeJobResponse({ responseId: `resp-${orderId}`, jobOrderId: orderId, startTime: 1, endTime: 2, state: JobStates.Ended_Completed, data: { log: "x".repeat(bytes) } })
      ),
      expectedVersion: 0,
      change: "ResultUpdate"
    })
  )

describe("JobControlIngress and the broker's Maximum Packet Size", () => {
  it.live("a query whose reply is over the broker's limit is answered with a ReplyTooLarge error naming both sizes; the next request is answered", () => {
    const prefix = randomPrefix("mp")
    const dropped: Array<string> = []
    return Effect.gen(function* () {
      const broker = yield* Effect.acquireRelease(
        Effect.promise(() => startMosquitto({ maxPacketSize: LIMIT })),
        (server) => Effect.promise(() => server.stop())
      )
      const ingress = JobControlIngress(ingressOptions(prefix, { onPublishDropped: (what, reason) => void dropped.push(`${what}:${reason}`) })).pipe(
        Layer.provide(jobControlLayer()),
        Layer.provideMerge(islandMqtt(broker.url)),
        Layer.provide(storeFor(prefix))
      )
      const island = Context.get(yield* Layer.build(ingress), MqttConnection)
      const statuses: Array<MqttStatus> = []
      yield* island.statusChanges.pipe(
        Stream.runForEach((status) => Effect.sync(() => statuses.push(status))),
        Effect.forkScoped
      )
      const mes = yield* makeMes(broker.url, prefix)
      expect((yield* mes.call(MethodEventTypes.Store, jobOrder("jo-big"))).data).toMatchObject({ ReturnStatus: ReturnStatus.NO_ERROR })
      yield* bigResponse(SCOPE, "jo-big", 2 * LIMIT)
      const answer = yield* mes.call(QueryEventTypes.RequestJobResponseByJobOrderID, { JobOrderID: "jo-big" })
      expect(answer.type).toBe("org.opcfoundation.Machinery.Jobs.RequestJobResponseByJobOrderIDResponse.v1")
      expect(answer.extensions["mdcserrorkind"]).toBe("ReplyTooLarge")
      expect(answer.extensions["mdcserrormessage"]).toMatch(new RegExp(`over the broker's maximum packet size \\(${LIMIT} bytes\\)`))
      // The request was processed: its ReturnStatus travels, only the data is left out.
      expect(answer.data).toEqual({ ReturnStatus: ReturnStatus.NO_ERROR })
      expect(dropped).toEqual(["reply:too-large"])
      expect((yield* mes.call(MethodEventTypes.Store, jobOrder("jo-after"))).data).toMatchObject({ ReturnStatus: ReturnStatus.NO_ERROR })
      expect(yield* island.status).toBe("connected")
      expect(statuses).not.toContain("reconnecting")
    }).pipe(Effect.provide(storeFor(prefix)), Effect.scoped)
  }, 30_000)
})
