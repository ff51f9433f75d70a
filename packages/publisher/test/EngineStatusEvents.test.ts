import { describe, expect, it } from "@effect/vitest"
import { Effect, Result, Stream } from "effect"
import { randomPrefix } from "@microdcs/test-utils"
import { mosquittoForFile } from "@microdcs/testkit"
import { encodeJobOrderRecord, JOB_ORDER_STATUS_EVENT_TYPE, JobStates, toStoredState } from "@microdcs/job-state"
import { type CloudEvent, makeMqttConnection } from "@microdcs/cloudevents-mqtt"
import { JobOrderDao } from "@microdcs/store"
import { jobOrder, startPublisher, store, until } from "./Kit.js"

const broker = mosquittoForFile()

describe("Publisher: status events of engine transitions", () => {
  it.live("emits one status event per Run, Complete and engine Abort, and none for MES methods", () => {
    const valkeyPrefix = randomPrefix("pub")
    const prefix = randomPrefix("mqtt")
    return Effect.gen(function* () {
      const mes = yield* makeMqttConnection({ url: broker.url, clientIdBase: "mes", connectTimeoutMs: 5000 })
      const seen: Array<CloudEvent> = []
      yield* (yield* mes.subscribe(`${prefix}/+/events`)).pipe(
        Stream.runForEach((m) => Effect.sync(() => Result.isSuccess(m.decoded) && seen.push(m.decoded.success)).pipe(Effect.andThen(m.ack))),
        Effect.forkScoped
      )
      yield* startPublisher(broker.url, valkeyPrefix, { prefix, fallbackIntervalMs: 100, leaseTtlMs: 3000 })
      const dao = yield* JobOrderDao
      const put = (state: keyof typeof JobStates, version: number, change: string, op: string) =>
        dao.put({ id: "jo-1", scope: "line-1", doc: encodeJobOrderRecord(jobOrder("jo-1", 1), JobStates[state]), priority: 1, expectedVersion: version, change, op })
      yield* put("AllowedToStart_Ready", 0, "StoreAndStart", "mes-1")
      yield* put("Running", 1, "Run", "sfc:jo-1:1:Run")
      yield* put("Ended_Completed", 2, "Complete", "sfc:jo-1:5:Complete")
      const events = yield* until(Effect.sync(() => [...seen]), (e) => e.length >= 2)
      yield* Effect.sleep("300 millis")
      expect(seen.map((e) => (e.data as { Method: string }).Method)).toEqual(["Run", "Complete"])
      expect(events[0]).toMatchObject({ type: JOB_ORDER_STATUS_EVENT_TYPE, subject: "line-1", id: "line-1/status/jo-1/v2" })
      expect(events[1]!.data).toEqual({ JobOrderID: "jo-1", JobState: toStoredState(JobStates.Ended_Completed), Method: "Complete", Version: 3 })
    }).pipe(Effect.scoped, Effect.provide(store(valkeyPrefix)))
  })
})
