import { randomUUID } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Result, Stream } from "effect"
import {
  type CloudEvent,
  eventsTopic,
  type IncomingMessage,
  makeCloudEvent,
  makeMqttConnection,
  stationCommandTopic,
  stationEventsTopic
} from "@microdcs/cloudevents-mqtt"
import { decodeStationScript, makeStation, type StationScript } from "@microdcs/island-sim"
import { JOB_ORDER_STATUS_EVENT_TYPE, JobStates, toStoredState } from "@microdcs/job-state"
import { randomPrefix, until } from "@microdcs/test-utils"
import { mosquittoForFile } from "@microdcs/testkit"

/**
 * The station against the broker alone: the test plays the island on a connection of its own
 * (push commands as the island sends them, its job status events) and reads what the station
 * answers and emits. No island, no Valkey.
 */

const broker = mosquittoForFile()

const TIGHTEN = "com.example.station.tighten.v1"
const TORQUE = "com.example.station.torque.v1"
const QA = "com.example.station.qa.v1"

const script: StationScript = Result.getOrThrow(
  decodeStationScript({
    scopes: ["line-a"],
    resend: { everyMs: 30, forMs: 60_000 },
    commands: [{ type: TIGHTEN, reply: { done: "{{action}}" }, error: { message: "jammed", when: { nth: [2] } }, emit: [{ type: TORQUE }] }],
    events: { [TORQUE]: { data: { torque_ok: true, job: "{{jobid}}" } }, [QA]: { data: { passed: true } } },
    schedule: [{ scope: "line-a", type: QA, everyMs: 50 }]
  })
)

/** The island's side: sends push commands as the island does and keeps every reply and station event. */
const fakeIsland = (prefix: string) =>
  Effect.gen(function* () {
    const topics = { prefix }
    const mqtt = yield* makeMqttConnection({ url: broker.url, clientIdBase: "fake-island" })
    const replyTopic = `${prefix}/replies/island-1`
    const replies: Array<IncomingMessage> = []
    const events: Array<CloudEvent> = []
    yield* (yield* mqtt.subscribe(replyTopic)).pipe(Stream.runForEach((m) => Effect.sync(() => replies.push(m)).pipe(Effect.andThen(m.ack))), Effect.forkScoped)
    yield* (yield* mqtt.subscribe(Result.getOrThrow(stationEventsTopic(topics, "line-a")))).pipe(
      Stream.runForEach((m) => Effect.sync(() => Result.isSuccess(m.decoded) && events.push(m.decoded.success)).pipe(Effect.andThen(m.ack))),
      Effect.forkScoped
    )
    const command = (scope: string, jobId: string) =>
      Effect.gen(function* () {
        const correlationId = randomUUID()
        const event = makeCloudEvent({
          id: `${correlationId}.1`, source: "urn:island", type: TIGHTEN, subject: scope, data: { bolts: 6 }, correlationid: correlationId,
          extensions: { jobid: jobId, action: "tighten", attempt: "1" }
        })
        yield* mqtt.publish(Result.getOrThrow(stationCommandTopic(topics, scope)), event, { responseTopic: replyTopic, correlationId })
        return correlationId
      })
    const replyTo = (correlationId: string) => {
      const wanted = Buffer.from(correlationId.replaceAll("-", ""), "hex")
      const found = replies.find((m) => m.correlationData?.equals(wanted))
      return found !== undefined && Result.isSuccess(found.decoded) ? found.decoded.success : undefined
    }
    const ended = (scope: string, jobId: string) =>
      mqtt.publish(
        Result.getOrThrow(eventsTopic(topics, scope)),
        makeCloudEvent({ source: "urn:island", type: JOB_ORDER_STATUS_EVENT_TYPE, subject: scope, data: { JobOrderID: jobId, JobState: toStoredState(JobStates.Ended_Completed), Method: "Complete", Version: 9 } })
      )
    return { topics, command, replyTo, ended, events }
  })

const torqueOf = (events: ReadonlyArray<CloudEvent>, jobId: string) => events.filter((e) => e.type === TORQUE && e.extensions["jobid"] === jobId)

/** Waits until no new event of the job has come for `quietMs`: copies that never stop fail the wait. */
const quiet = (events: ReadonlyArray<CloudEvent>, jobId: string, quietMs = 600) =>
  Effect.gen(function* () {
    let seen = -1
    yield* until(
      Effect.gen(function* () {
        const before = torqueOf(events, jobId).length
        yield* Effect.sleep(quietMs)
        const still = before === seen && torqueOf(events, jobId).length === before
        seen = torqueOf(events, jobId).length
        return still
      }),
      (done) => done,
      { within: "20 seconds", every: 0, what: `no more events of ${jobId}` }
    )
    return torqueOf(events, jobId).length
  })

describe("island-sim station over the broker alone", () => {
  it.live("answers the commands of its own scope only, as its script says", () =>
    Effect.gen(function* () {
      const island = yield* fakeIsland(randomPrefix("sim"))
      const station = yield* makeStation({ mqtt: { url: broker.url }, topics: island.topics, script })
      const elsewhere = yield* island.command("line-b", "jo-b")
      const first = yield* island.command("line-a", "jo-1")
      const second = yield* island.command("line-a", "jo-2")
      const replies = yield* until(Effect.sync(() => [island.replyTo(first), island.replyTo(second)]), (r) => r.every((e) => e !== undefined), { what: "both replies" })
      expect(replies[0]).toMatchObject({ type: `${TIGHTEN}.reply`, subject: "line-a", data: { done: "tighten" } })
      expect(replies[0]?.extensions["causationid"]).toBe(`${first}.1`)
      // The second command of the rule is scripted to fail.
      expect(replies[1]?.extensions).toMatchObject({ mdcserrorkind: "StationError", mdcserrormessage: "jammed" })
      expect(island.replyTo(elsewhere)).toBeUndefined()
      expect(station.stats()).toMatchObject({ commands: 2, replies: 1, errors: 1, commandsByType: { [TIGHTEN]: 2 } })
      // Only a job whose command succeeded gets its torque event.
      yield* until(Effect.sync(() => torqueOf(island.events, "jo-1").length), (n) => n > 0)
      expect(torqueOf(island.events, "jo-2")).toEqual([])
    }).pipe(Effect.scoped)
  )

  it.live("sends a triggered event again with the same id until the island says its job ended; the job's next one replaces it", () =>
    Effect.gen(function* () {
      const island = yield* fakeIsland(randomPrefix("sim"))
      yield* makeStation({ mqtt: { url: broker.url }, topics: island.topics, script: { ...script, commands: [{ ...script.commands[0]!, error: undefined }] } })
      yield* island.command("line-a", "jo-7")
      const copies = yield* until(Effect.sync(() => torqueOf(island.events, "jo-7")), (events) => events.length >= 3, { what: "three copies" })
      expect(new Set(copies.map((e) => e.id)).size).toBe(1)
      expect(copies[0]).toMatchObject({ source: "urn:microdcs:island-sim:station", subject: "line-a", data: { torque_ok: true, job: "jo-7" } })

      // The rework loop: the job's next tightening sets off a new torque event, which takes over.
      yield* island.command("line-a", "jo-7")
      const firstId = copies[0]!.id
      const isFirst = (e: CloudEvent) => e.id === firstId
      yield* until(Effect.sync(() => torqueOf(island.events, "jo-7").filter((e) => !isFirst(e)).length), (n) => n >= 1)
      const firstCopies = torqueOf(island.events, "jo-7").filter(isFirst).length
      yield* until(Effect.sync(() => torqueOf(island.events, "jo-7").filter((e) => !isFirst(e)).length), (n) => n >= 6)
      expect(torqueOf(island.events, "jo-7").filter(isFirst).length).toBeLessThanOrEqual(firstCopies + 1)

      yield* island.ended("line-a", "jo-7")
      const total = yield* quiet(island.events, "jo-7")
      // A command for a job that has ended sets off nothing.
      const late = yield* island.command("line-a", "jo-7")
      yield* until(Effect.sync(() => island.replyTo(late)), (r) => r !== undefined)
      expect(yield* quiet(island.events, "jo-7")).toBe(total)
    }).pipe(Effect.scoped)
  )

  it.live("emits scheduled events without a job, and events on demand for its own scopes only", () =>
    Effect.gen(function* () {
      const island = yield* fakeIsland(randomPrefix("sim"))
      const station = yield* makeStation({ mqtt: { url: broker.url }, topics: island.topics, script })
      const scheduled = yield* until(Effect.sync(() => island.events.filter((e) => e.type === QA)), (events) => events.length >= 2, { what: "two scheduled events" })
      expect(scheduled[0]).toMatchObject({ data: { passed: true }, extensions: {} })
      expect(scheduled[0]!.id).not.toBe(scheduled[1]!.id)
      yield* station.emit("line-a", TORQUE, { jobId: "jo-9", id: "torque-9" })
      const emitted = yield* until(Effect.sync(() => torqueOf(island.events, "jo-9")), (events) => events.length === 1)
      expect(emitted[0]).toMatchObject({ id: "torque-9", data: { torque_ok: true, job: "jo-9" } })
      const refused = yield* Effect.flip(station.emit("line-b", TORQUE))
      expect(refused._tag).toBe("StationScopeUnknown")
    }).pipe(Effect.scoped)
  )
})
