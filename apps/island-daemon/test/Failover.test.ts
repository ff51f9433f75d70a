import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { inject } from "vitest"
import { JobStates, MethodEventTypes, QueryEventTypes, toStoredState } from "@microdcs/job-state"
import { storeLayer } from "@microdcs/store"
import { type MosquittoServer, randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { daemon, daemonEnv } from "./DaemonProcess.js"
import { axleJobOrder, axleStation, batchProblems, completedCount, configureAxleStation, eventually, fixture, makeMes } from "./IslandKit.js"

/**
 * `kill -9` of one of two daemons while the jobs run: the survivor takes over the dead one's
 * pending stream entries (SFC_CLAIM_IDLE_MS=1500) and finishes every job exactly once.
 */

let broker: MosquittoServer
beforeAll(async () => {
  broker = await startMosquitto()
})
afterAll(async () => {
  await broker?.stop()
})

const JOBS = 20

/**
 * The axle work master with short push-command timeouts. A command the dead daemon sent is
 * answered on its reply topic, which nobody reads any more; the survivor's sweep sends it again
 * once the timeout is over, so the timeout bounds the takeover.
 */
const quickAxle = () => {
  const workMaster = fixture("work-master-axle.json") as { data: { Actions: Array<Record<string, unknown>> } }
  for (const action of workMaster.data.Actions) if (action["Interaction"] === "push_command") action["TimeoutSeconds"] = 4
  return workMaster as unknown as Record<string, unknown>
}

describe("failover", () => {
  it.live(
    "kill -9 of one daemon mid-run: the other completes every job exactly once",
    () => {
      const prefix = randomPrefix("fo")
      return Effect.gen(function* () {
        const env = (instanceId: string) =>
          daemonEnv({ valkeyUrl: inject("valkeyUrl"), mqttUrl: broker.url, prefix, instanceId, extra: { MQTT_SHARED_GROUP: "island" } })
        const [victim, survivor] = yield* Effect.all([daemon(env("fo-a")), daemon(env("fo-b"))], { concurrency: 2 })
        // Slow answers, so the jobs are still running when the daemon dies.
        yield* axleStation(broker.url, prefix, 150)
        const mes = yield* makeMes(broker.url, prefix)
        yield* configureAxleStation(mes, quickAxle())

        const ids = Array.from({ length: JOBS }, (_, i) => `jo-fo-${String(i + 1).padStart(2, "0")}`)
        // Every job accepted (each StoreAndStart answered NO_ERROR) before the kill.
        yield* Effect.forEach(ids, (id) => mes.ok(MethodEventTypes.StoreAndStart, { JobOrder: axleJobOrder(id) }), { concurrency: 10, discard: true })
        victim.child.kill("SIGKILL")
        const killed = yield* Effect.promise(() => victim.exited)
        expect(killed.signal).toBe("SIGKILL")
        // The point of the test: work was left in the middle.
        expect(yield* completedCount(ids)).toBeLessThan(JOBS)

        yield* eventually(
          Effect.map(completedCount(ids), (n) => (n === JOBS ? n : undefined)),
          40_000,
          "every job Ended_Completed"
        )
        expect(yield* batchProblems(ids)).toEqual([])

        // The survivor still answers the MES on its own.
        for (const id of ids.slice(0, 4)) {
          const reply = yield* mes.ok(QueryEventTypes.RequestJobResponseByJobOrderID, { JobOrderID: id })
          expect(reply.data).toMatchObject({ JobOrderID: id, JobResponse: { JobResponseID: `${id}-response`, JobState: toStoredState(JobStates.Ended_Completed) } })
        }
        const exit = yield* Effect.promise(() => survivor.stop("SIGTERM"))
        expect(exit.code, survivor.stderr()).toBe(0)
      }).pipe(Effect.scoped, Effect.provide(Layer.orDie(storeLayer({ url: inject("valkeyUrl"), prefix }))))
    },
    60_000
  )
})
