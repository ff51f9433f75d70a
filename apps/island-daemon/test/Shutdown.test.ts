import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { inject } from "vitest"
import { ConfigEventTypes } from "@microdcs/job-control"
import { MethodEventTypes, ReturnStatus } from "@microdcs/job-state"
import { RECIPE_SCHEMA_ID } from "@microdcs/sfc"
import { JobOrderDao, storeLayer } from "@microdcs/store"
import { type MosquittoServer, randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { daemonEnv, type DaemonProcess, spawnDaemon } from "./DaemonProcess.js"
import { allChanges, eventually, historyProblems, jobOrderOf, makeMes, SCOPE } from "./IslandKit.js"

/**
 * SIGTERM under load: the daemon stops taking messages, finishes the in-flight ones and exits 0;
 * the requests it had not taken stay in its persistent MQTT session and are processed when it
 * comes back with the same instance id. In the end every request has exactly one reply and
 * every job order exists once with a consistent history.
 */

let broker: MosquittoServer
const daemons: Array<DaemonProcess> = []
beforeAll(async () => {
  broker = await startMosquitto()
})
afterAll(async () => {
  for (const d of daemons) await d.stop("SIGKILL")
  await broker?.stop()
})

const REQUESTS = 40
const GRACE_MS = 10_000

/** Resolves once `answered()` holds, looking every millisecond; rejects after 20 s. */
const firstReply = async (answered: () => boolean) => {
  const deadline = Date.now() + 20_000
  while (!answered()) {
    if (Date.now() > deadline) throw new Error("no reply within 20 s")
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
}

/**
 * A recipe that waits for an event no station sends: a started job runs and stays Running, a
 * stable state to check. (A recipe that completes in its first step is avoided on purpose: its
 * Run and Complete outbox entries can land in either order, see the report.)
 */
const waitingWorkMaster = {
  ID: "wm-wait",
  dataschema: RECIPE_SCHEMA_ID,
  data: {
    Steps: [{ Name: "Wait", Initial: true }],
    Transitions: [],
    Actions: [{ Name: "await", Step: "Wait", Qualifier: "N", Interaction: "pull_event", TypeId: "com.example.never.v1", TimeoutSeconds: 600 }]
  }
}

describe("graceful shutdown", () => {
  it.live(
    "SIGTERM while requests are processed exits 0 within the grace; after a restart every request has exactly one reply",
    () => {
      const prefix = randomPrefix("sd")
      return Effect.gen(function* () {
        const env = daemonEnv({
          valkeyUrl: inject("valkeyUrl"),
          mqttUrl: broker.url,
          prefix,
          instanceId: "drain-1",
          // A narrow intake (4 requests in flight): at the SIGTERM most requests are still in the
          // broker, however fast the island answers the ones it took (at 64 it answered all 40
          // between two looks at the replies).
          extra: { SHUTDOWN_GRACE_MS: String(GRACE_MS), MQTT_RECEIVE_MAXIMUM: "4" }
        })
        const start = () =>
          Effect.promise(async () => {
            const d = await spawnDaemon(env)
            daemons.push(d)
            await d.waitReady()
            return d
          })
        const first = yield* start()
        const mes = yield* makeMes(broker.url, prefix)
        yield* mes.ok(ConfigEventTypes.workmaster, waitingWorkMaster)

        // Even ones Store, odd ones StoreAndStart (which also sets the engine to work).
        const ids = Array.from({ length: REQUESTS }, (_, i) => `jo-drain-${String(i).padStart(2, "0")}`)
        const requests = yield* Effect.forEach(
          ids,
          (id, i) =>
            mes.send(i % 2 === 0 ? MethodEventTypes.Store : MethodEventTypes.StoreAndStart, {
              JobOrder: { JobOrderID: id, ...(i % 2 === 0 ? {} : { WorkMasterID: [{ ID: "wm-wait" }] }) }
            }),
          { concurrency: "unbounded" }
        )
        // SIGTERM as soon as the first answer is out (looked for every millisecond): the rest are
        // in flight or not taken yet.
        yield* Effect.promise(() => firstReply(() => requests.some((c) => mes.repliesTo(c).length > 0)))
        const signalled = performance.now()
        first.child.kill("SIGTERM")
        const exit = yield* Effect.promise(() => first.exited)
        const stoppedAfterMs = performance.now() - signalled
        expect(exit.code, first.stderr()).toBe(0)
        expect(stoppedAfterMs).toBeLessThan(GRACE_MS)
        // Nothing was cut off by the grace limit.
        expect(first.logs().filter((l) => l.message?.includes("grace over"))).toEqual([])
        const answeredBeforeRestart = requests.filter((c) => mes.repliesTo(c).length > 0).length
        // The point of the test: some requests were still open when the daemon went down.
        expect(answeredBeforeRestart).toBeLessThan(REQUESTS)

        // Requests sent while no daemon runs wait in its session (the subscription stays there).
        const whileDown = yield* Effect.forEach(["jo-late-1", "jo-late-2"], (id) => mes.send(MethodEventTypes.Store, { JobOrder: { JobOrderID: id } }))

        // Same instance id: the broker hands the open requests to the new process.
        const second = yield* start()
        yield* eventually(
          Effect.sync(() => (whileDown.every((c) => mes.repliesTo(c).length === 1) ? true : undefined)),
          20_000,
          "a reply to every request sent while the daemon was down"
        )
        yield* eventually(
          Effect.sync(() => (requests.every((c) => mes.repliesTo(c).length > 0) ? true : undefined)),
          20_000,
          "a reply to every request"
        )
        // A redelivery of an answered request must not be answered again: give any late duplicate time to arrive.
        yield* Effect.sleep("500 millis")
        for (const [i, correlationId] of requests.entries()) {
          const replies = mes.repliesTo(correlationId)
          expect(replies, ids[i]).toHaveLength(1)
          expect((replies[0]!.data as { ReturnStatus?: number }).ReturnStatus, `${ids[i]}: ${JSON.stringify(replies[0]!.data)}`).toBe(
            ReturnStatus.NO_ERROR
          )
        }

        // Every job order exists once, in the state its method leads to, with a gapless history.
        yield* eventually(
          Effect.gen(function* () {
            const states = yield* Effect.forEach(ids, (id) => jobOrderOf(id))
            return states.every((s, i) => s?.state === (i % 2 === 0 ? "NotAllowedToStart_Ready" : "Running")) ? true : undefined
          }),
          20_000,
          "every job order in its final state"
        )
        const listed = yield* Effect.flatMap(JobOrderDao, (dao) => dao.list(SCOPE, { count: 1000 }))
        expect(listed.items.map((item) => item.id).sort()).toEqual([...ids, "jo-late-1", "jo-late-2"].sort())
        const changes = yield* allChanges(SCOPE)
        for (const [i, id] of ids.entries()) {
          const creations = changes.filter((c) => c.kind === "joborder" && c.id === id && (c.change === "Store" || c.change === "StoreAndStart"))
          expect(creations.map((c) => c.change), id).toEqual([i % 2 === 0 ? "Store" : "StoreAndStart"])
          const stored = yield* jobOrderOf(id)
          expect(historyProblems(id, changes, stored!.version)).toEqual([])
        }

        const exitAgain = yield* Effect.promise(() => second.stop("SIGTERM"))
        expect(exitAgain.code, second.stderr()).toBe(0)
      }).pipe(Effect.scoped, Effect.provide(Layer.orDie(storeLayer({ url: inject("valkeyUrl"), prefix }))))
    },
    60_000
  )
})
