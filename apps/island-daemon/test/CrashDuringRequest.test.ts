import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Result, Layer, Stream } from "effect"
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
 * `kill -9` of the daemon while a Store holds its dedupe claim and its write cannot land: the
 * request's duplicate, held by a second daemon of the island while the dead one's claim looks
 * live, is taken over within seconds of the death (the dead daemon's liveness key expires; the
 * 60 s lease is not waited out), processed exactly once and answered. The broker's redelivery to
 * the restarted daemon, and a later duplicate, get the same reply again.
 */

let broker: MosquittoServer
beforeAll(async () => {
  broker = await startMosquitto()
})
afterAll(async () => {
  await broker?.stop()
})

const JOB = "jo-crash"
/** The production default: the duplicate must not wait for it. */
const LEASE_MS = 60_000
/** The liveness key lives 3 s after the dead daemon's last renewal; the rest is slack for a loaded machine. */
const ANSWERED_WITHIN_MS = 10_000

/**
 * An MES that sends chosen events (a resend keeps the CloudEvent id) to the command topic under
 * `topicPrefix`, and keeps every reply.
 */
const makeMes = (prefix: string) =>
  Effect.gen(function* () {
    const connection = yield* makeMqttConnection({ url: broker.url, clientIdBase: "mes", connectTimeoutMs: 5000 })
    const replyTopic = `${prefix}/replies/mes-${randomUUID().slice(0, 8)}`
    const replies: Array<IncomingMessage> = []
    yield* (yield* connection.subscribe(replyTopic)).pipe(
      Stream.runForEach((m) => Effect.sync(() => replies.push(m)).pipe(Effect.andThen(m.ack))),
      Effect.forkScoped
    )
    const send = (topicPrefix: string, event: CloudEvent, correlationId: string = randomUUID()) =>
      Effect.as(connection.publish(`${topicPrefix}/${SCOPE}/commands`, event, { responseTopic: replyTopic, correlationId }), correlationId)
    const repliesTo = (correlationId: string): ReadonlyArray<CloudEvent> => {
      const wanted = Buffer.from(correlationId.replaceAll("-", ""), "hex")
      return replies.flatMap((m) => (m.correlationData?.equals(wanted) && Result.isSuccess(m.decoded) ? [m.decoded.success] : []))
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
    "kill -9 while a Store holds its dedupe claim: the duplicate held by another daemon is taken over within seconds (not the 60 s lease), processed exactly once, and every delivery gets the same reply",
    () => {
      const prefix = randomPrefix("cr")
      // Two daemons of one island (one Valkey prefix) on command topics of their own, so the
      // test decides which one gets which delivery: the victim the request, the survivor the resend.
      const victimTopics = `${prefix}-a`
      const survivorTopics = `${prefix}-b`
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
        const env = (instanceId: string, valkeyUrl: string, topicPrefix: string) =>
          daemonEnv({
            valkeyUrl,
            mqttUrl: broker.url,
            prefix,
            instanceId,
            extra: { ISLAND_ROLES: "job-control", DEDUPE_LEASE_MS: String(LEASE_MS), MQTT_TOPIC_PREFIX: topicPrefix }
          })
        const survivor = yield* daemon(env("crash-2", inject("valkeyUrl"), survivorTopics))
        const victim = yield* daemon(env("crash-1", gate.url, victimTopics))
        const mes = yield* makeMes(prefix)
        const request = makeCloudEvent({ source: MES_SOURCE, type: MethodEventTypes.Store, subject: SCOPE, data: { JobOrder: { JobOrderID: JOB, Priority: 1 } } })
        const correlationId = yield* mes.send(victimTopics, request)

        yield* Effect.promise(() => gate.closed).pipe(Effect.timeout("20 seconds"))
        const claimed = yield* dedupeEntry
        expect(claimed?.value).toMatch(/^processing:/)
        expect(claimed?.ttlMs).toBeGreaterThan(LEASE_MS - 30_000)
        victim.child.kill("SIGKILL")
        const killedAt = Date.now()
        expect((yield* Effect.promise(() => victim.exited)).signal).toBe("SIGKILL")
        expect(mes.repliesTo(correlationId)).toHaveLength(0)
        expect(yield* storeChanges).toEqual([])

        // The MES resends while the dead holder's claim still has nearly all of its lease.
        const resent = yield* mes.send(survivorTopics, request)
        const answered = yield* eventually(
          Effect.sync(() => mes.repliesTo(resent)[0]),
          Math.max(0, killedAt + ANSWERED_WITHIN_MS - Date.now()),
          `the resend's reply within ${ANSWERED_WITHIN_MS} ms of the kill (the lease is ${LEASE_MS} ms)`
        )
        expect(answered.data).toEqual({ ReturnStatus: ReturnStatus.NO_ERROR, JobOrderID: JOB })
        expect(yield* storeChanges).toEqual(["Store"])
        expect((yield* dedupeEntry)?.value).toMatch(/^done:/)
        // It was held while the dead daemon's liveness key lived, and then taken over.
        expect(heldCount((yield* Effect.promise(() => survivor.get("/metrics"))).text)).toBeGreaterThanOrEqual(1)
        expect(survivor.logs().some((l) => l.message === "took over the dedupe claim of a holder that died")).toBe(true)

        // The victim comes back under its instance id: the broker redelivers the request it never
        // acknowledged, and it gets the reply kept with the done mark, nothing processed again.
        const restarted = yield* daemon(env("crash-1", inject("valkeyUrl"), victimTopics))
        const redelivered = yield* eventually(Effect.sync(() => mes.repliesTo(correlationId)[0]), 20_000, "reply to the redelivery")
        // A duplicate of the done request (another correlation) is answered with the same reply.
        const againId = yield* mes.send(survivorTopics, request)
        const again = yield* eventually(Effect.sync(() => mes.repliesTo(againId)[0]), 20_000, "reply to the duplicate")
        for (const reply of [redelivered, again]) {
          expect({ id: reply.id, type: reply.type, data: reply.data }).toEqual({ id: answered.id, type: answered.type, data: answered.data })
        }
        expect(mes.repliesTo(resent)).toHaveLength(1)
        expect(yield* storeChanges).toEqual(["Store"])

        for (const running of [restarted, survivor]) {
          const exit = yield* Effect.promise(() => running.stop("SIGTERM"))
          expect(exit.code, running.stderr()).toBe(0)
        }
      }).pipe(Effect.scoped, Effect.provide(Layer.orDie(storeLayer({ url: inject("valkeyUrl"), prefix }))))
    },
    120_000
  )
})
