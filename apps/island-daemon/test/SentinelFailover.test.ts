import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Result, Fiber, Layer, Ref } from "effect"
import { MethodEventTypes, ReturnStatus } from "@microdcs/job-state"
import { JobResponseDao, SfcStateDao, storeLayer } from "@microdcs/store"
import { type MosquittoServer, randomPrefix, type SentinelTopology, startMosquitto, startSentinelTopology } from "@microdcs/test-utils"
import { daemon, daemonEnv } from "./DaemonProcess.js"
import { axleJobOrder, axleStation, configureAxleStation, jobOrderOf, makeMes } from "./IslandKit.js"

/**
 * Issue 9, item 20, through the daemon: job orders sent by an MES while `SENTINEL FAILOVER`
 * moves the primary (the old one stays up until Sentinel demotes it). Every StoreAndStart the
 * daemon answered NO_ERROR must afterwards have its job order on the new primary, and its
 * execution (the job still runs) or its job response (it ended). The daemon runs at default
 * settings (no VALKEY_MIN_REPLICAS_ACK): through Sentinel it then acknowledges only what the
 * replica confirmed.
 */

let broker: MosquittoServer
let topology: SentinelTopology
beforeAll(async () => {
  ;[broker, topology] = await Promise.all([startMosquitto(), startSentinelTopology({ replicas: 1, downAfterMs: 1000 })])
}, 120_000)
afterAll(async () => {
  await Promise.all([broker?.stop(), topology?.stop()])
})

const SENDERS = 4

describe("Sentinel failover through the daemon", () => {
  it.live(
    "SENTINEL FAILOVER while the MES sends job orders, at default settings: acknowledged job orders lost: 0",
    () => {
      const prefix = randomPrefix("dsf")
      const sentinels = topology.sentinelNodes.map((s) => `${s.host}:${s.port}`).join(",")
      return Effect.gen(function* () {
        const old = yield* Effect.promise(() => topology.primary())
        const env = daemonEnv({
          valkeyUrl: `redis://${old.host}:${old.port}`,
          mqttUrl: broker.url,
          prefix,
          instanceId: "dsf-a",
          extra: { VALKEY_SENTINELS: sentinels, VALKEY_SENTINEL_NAME: topology.masterName }
        })
        const island = yield* daemon(env)
        expect(island.logs().some((l) => l.message?.startsWith("through Sentinel every write waits for one replica's confirmation") === true)).toBe(true)
        yield* axleStation(broker.url, prefix)
        const mes = yield* makeMes(broker.url, prefix)
        yield* configureAxleStation(mes)

        const accepted = yield* Ref.make<ReadonlyArray<string>>([])
        const outcomes = new Map<string, number>()
        const stop = yield* Deferred.make<void>()
        const sender = (s: number) =>
          Effect.gen(function* () {
            for (let i = 0; !(yield* Deferred.isDone(stop)); i++) {
              const id = `jo-dsf-${s}-${String(i).padStart(4, "0")}`
              const reply = yield* Effect.result(mes.replyTo(yield* mes.send(MethodEventTypes.StoreAndStart, { JobOrder: axleJobOrder(id) }), 30_000))
              const status = Result.isSuccess(reply) ? (reply.success.data as { ReturnStatus?: number } | undefined)?.ReturnStatus : undefined
              const outcome = Result.isFailure(reply) ? "no reply" : `ReturnStatus ${status}`
              outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1)
              if (status === ReturnStatus.NO_ERROR) yield* Ref.update(accepted, (ids) => [...ids, id])
              else yield* Effect.sleep("100 millis")
            }
          })
        const senders = yield* Effect.forEach(Array.from({ length: SENDERS }, (_, s) => s), (s) => Effect.forkChild(sender(s)))
        const acceptMore = (more: number) =>
          Effect.gen(function* () {
            const target = (yield* Ref.get(accepted)).length + more
            const deadline = Date.now() + 90_000
            while ((yield* Ref.get(accepted)).length < target) {
              if (Date.now() > deadline) {
                const seen = JSON.stringify([...outcomes])
                return yield* Effect.die(new Error(`fewer than ${target} job orders accepted within 90 s (${seen})\n${island.stdout().slice(-3000)}`))
              }
              yield* Effect.sleep("100 millis")
            }
          })

        yield* acceptMore(20)
        yield* Effect.promise(() => topology.failover())
        yield* Effect.promise(() => topology.waitForNewPrimary(old.port))
        yield* Effect.promise(() => topology.waitForReplicas(1))
        yield* acceptMore(20)
        yield* Deferred.succeed(stop, undefined)
        yield* Fiber.joinAll(senders)

        const ids = yield* Ref.get(accepted)
        const responses = yield* JobResponseDao
        const executions = yield* SfcStateDao
        // The job order, and its execution while the job runs or its job response once it ended.
        const missing = Effect.gen(function* () {
          const lost: Array<string> = []
          for (const id of ids) {
            if ((yield* jobOrderOf(id)) === undefined) lost.push(`${id}: no job order`)
            else if (Result.isFailure(yield* Effect.result(executions.get(id))) && Result.isFailure(yield* Effect.result(responses.byOrder(id)))) {
              lost.push(`${id}: neither an execution nor a job response`)
            }
          }
          return lost
        })
        // An execution ends between the two reads: a second look settles it.
        let lost = yield* missing
        if (lost.length > 0) lost = yield* Effect.andThen(Effect.sleep("1 second"), missing)
        expect(lost, `acknowledged job orders lost: ${lost.length} of ${ids.length}`).toEqual([])
      }).pipe(
        Effect.scoped,
        Effect.provide(Layer.orDie(storeLayer({ sentinels: topology.sentinelNodes, sentinelName: topology.masterName, prefix })))
      )
    },
    240_000
  )
})
