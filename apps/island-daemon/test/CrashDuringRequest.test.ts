import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Stream } from "effect"
import { inject } from "vitest"
import { type CloudEvent, type IncomingMessage, makeCloudEvent, makeMqttConnection } from "@microdcs/cloudevents-mqtt"
import { MethodEventTypes, ReturnStatus } from "@microdcs/job-state"
import { ChangeStream, storeLayer, Valkey } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { type MosquittoServer, randomPrefix, startMosquitto } from "@microdcs/test-utils"
import { daemon, daemonEnv } from "./DaemonProcess.js"
import { eventually, MES_SOURCE, SCOPE } from "./IslandKit.js"
import { startValkeyGate } from "./ValkeyGate.js"

/**
 * `kill -9` of the daemon while a Store holds its dedupe claim and its write cannot land
 * (island.md §2): after the restart the broker redelivers the request, which waits, held, for
 * the dead holder's lease, and is then processed exactly once and answered. A duplicate of the
 * processed request gets the same reply again.
 */

let broker: MosquittoServer
beforeAll(async () => {
  broker = await startMosquitto()
})
afterAll(async () => {
  await broker?.stop()
})

const JOB = "jo-crash"
const LEASE_MS = 45_000

/** An MES that sends chosen events (a resend keeps the CloudEvent id) and keeps every reply. */
const makeMes = (prefix: string) =>
  Effect.gen(function* () {
    const connection = yield* makeMqttConnection({ url: broker.url, clientIdBase: "mes", connectTimeoutMs: 5000 })
    const replyTopic = `${prefix}/replies/mes-${randomUUID().slice(0, 8)}`
    const replies: Array<IncomingMessage> = []
    yield* (yield* connection.subscribe(replyTopic)).pipe(
      Stream.runForEach((m) => Effect.sync(() => replies.push(m)).pipe(Effect.zipRight(m.ack))),
      Effect.forkScoped
    )
    const send = (event: CloudEvent, correlationId: string = randomUUID()) =>
      Effect.as(connection.publish(`${prefix}/${SCOPE}/commands`, event, { responseTopic: replyTopic, correlationId }), correlationId)
    const repliesTo = (correlationId: string): ReadonlyArray<CloudEvent> => {
      const wanted = Buffer.from(correlationId.replaceAll("-", ""), "hex")
      return replies.flatMap((m) => (m.correlationData?.equals(wanted) && Either.isRight(m.decoded) ? [m.decoded.right] : []))
    }
    return { send, repliesTo } as const
  })

/** The one dedupe key under the prefix (one request is sent), with its value and remaining TTL. */
const dedupeEntry = Effect.gen(function* () {
  const valkey = yield* Valkey
  const [key] = yield* unsafeCommand(valkey, "dedupe keys", (c) => c.keys(`${valkey.options.prefix}:ce:dedupe:*`))
  if (key === undefined) return undefined
  const value = yield* unsafeCommand(valkey, "dedupe value", (c) => c.get(key))
  const ttlMs = yield* unsafeCommand(valkey, "dedupe ttl", (c) => c.pttl(key))
  return { key, value, ttlMs }
})

const storeChanges = Effect.flatMap(ChangeStream, (changes) => changes.read(SCOPE, { after: "0", count: 1000 })).pipe(
  Effect.map((page) => page.entries.filter((e) => e.id === JOB).map((e) => e.change))
)

/** `microdcs_messages_total` of job control with outcome `held`, summed over types. */
const heldCount = (metrics: string) =>
  metrics
    .split("\n")
    .filter((line) => line.startsWith("microdcs_messages_total{") && line.includes('kind="jobcontrol"') && line.includes('outcome="held"'))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(" ") + 1)), 0)

describe("crash during a request", () => {
  it.live(
    "kill -9 while a Store holds its dedupe claim: after the restart it is processed exactly once with a correct reply, and a duplicate gets the same reply",
    () => {
      const prefix = randomPrefix("cr")
      return Effect.gen(function* () {
        // Closes on the job order's put: a script call (EVALSHA/EVAL) whose first key is the job
        // order (the claim names it too, as its second key, to read the admission with the claim).
        // The claim landed, the write never does.
        const jobKey = `${prefix}:joborder:${JOB}`.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
        const putOfJob = new RegExp(`\r\neval(sha)?\r\n\\$\\d+\r\n[^\r]*\r\n\\$\\d+\r\n\\d+\r\n\\$\\d+\r\n${jobKey}\r\n`, "i")
        const gate = yield* Effect.acquireRelease(
          Effect.promise(() => startValkeyGate({ host: inject("valkeyHost"), port: inject("valkeyPort") }, (bytes) => putOfJob.test(bytes))),
          (g) => Effect.promise(() => g.stop())
        )
        // One instance id for both runs: the restarted daemon resumes the MQTT session the dead one left.
        const env = (valkeyUrl: string) =>
          daemonEnv({
            valkeyUrl,
            mqttUrl: broker.url,
            prefix,
            instanceId: "crash-1",
            extra: { ISLAND_ROLES: "job-control", DEDUPE_LEASE_MS: String(LEASE_MS) }
          })
        const victim = yield* daemon(env(gate.url))
        const mes = yield* makeMes(prefix)
        const request = makeCloudEvent({ source: MES_SOURCE, type: MethodEventTypes.Store, subject: SCOPE, data: { JobOrder: { JobOrderID: JOB, Priority: 1 } } })
        const correlationId = yield* mes.send(request)

        yield* Effect.promise(() => gate.closed).pipe(Effect.timeout("20 seconds"))
        const claimed = yield* dedupeEntry
        expect(claimed?.value).toMatch(/^processing:/)
        expect(claimed?.ttlMs).toBeGreaterThan(LEASE_MS - 30_000)
        expect(claimed?.ttlMs).toBeLessThanOrEqual(LEASE_MS)
        victim.child.kill("SIGKILL")
        expect((yield* Effect.promise(() => victim.exited)).signal).toBe("SIGKILL")
        expect(mes.repliesTo(correlationId)).toHaveLength(0)
        expect(yield* storeChanges).toEqual([])

        const survivor = yield* daemon(env(inject("valkeyUrl")))
        // The MES resends too, while the dead holder's lease still runs.
        yield* mes.send(request, correlationId)
        // Both deliveries (the broker's redelivery and the resend) are held, not acknowledged unanswered.
        yield* eventually(
          Effect.map(
            Effect.promise(() => survivor.get("/metrics")),
            (metrics) => (heldCount(metrics.text) >= 1 ? true : undefined)
          ),
          20_000,
          "a held request"
        )
        expect(mes.repliesTo(correlationId)).toHaveLength(0)
        // The dead holder's lease ends (shortened here, so the test need not wait it out).
        const stillClaimed = yield* dedupeEntry
        expect(stillClaimed?.value).toBe(claimed?.value)
        yield* Effect.flatMap(Valkey, (valkey) => unsafeCommand(valkey, "end lease", (c) => c.pexpire(stillClaimed!.key, 200)))

        const replies = yield* eventually(
          Effect.sync(() => (mes.repliesTo(correlationId).length >= 2 ? mes.repliesTo(correlationId) : undefined)),
          30_000,
          "replies to both deliveries"
        )
        const first = replies[0]!
        expect(first.data).toEqual({ ReturnStatus: ReturnStatus.NO_ERROR, JobOrderID: JOB })
        // Processed once; every other delivery got the first reply again.
        for (const reply of replies) expect({ id: reply.id, data: reply.data }).toEqual({ id: first.id, data: first.data })
        expect(yield* storeChanges).toEqual(["Store"])
        expect((yield* dedupeEntry)?.value).toMatch(/^done:/)

        // A duplicate of the done request (another correlation) is answered with the same reply.
        const againId = yield* mes.send(request)
        const again = yield* eventually(Effect.sync(() => mes.repliesTo(againId)[0]), 20_000, "reply to the duplicate")
        expect({ id: again.id, type: again.type, data: again.data }).toEqual({ id: first.id, type: first.type, data: first.data })
        expect(yield* storeChanges).toEqual(["Store"])

        const exit = yield* Effect.promise(() => survivor.stop("SIGTERM"))
        expect(exit.code, survivor.stderr()).toBe(0)
      }).pipe(Effect.scoped, Effect.provide(Layer.orDie(storeLayer({ url: inject("valkeyUrl"), prefix }))))
    },
    120_000
  )
})
