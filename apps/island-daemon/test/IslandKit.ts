import { randomUUID } from "node:crypto"
import { readFileSync } from "node:fs"
import { Duration, Effect, Result, Schedule, Stream } from "effect"
import { type CloudEvent, type IncomingMessage, makeCloudEvent, makeMqttConnection } from "@microdcs/cloudevents-mqtt"
import { makeSimulatedStation } from "@microdcs/island-mqtt"
import { ConfigEventTypes } from "@microdcs/job-control"
import { decodeJobOrderRecord, normalizedName, ReturnStatus } from "@microdcs/job-state"
import { type ChangeEntry, ChangeStream, JobOrderDao, JobResponseDao, PublisherCursors } from "@microdcs/store"

/**
 * What the daemon tests share besides the process helper: an MES on its own MQTT connection and
 * reads of the island's store. Not a test file itself.
 */

export const SCOPE = "line-1"
export const MES_SOURCE = "urn:test:mes"

/** The daemon's own fixtures: the axle work master and a job order for it. */
export const fixture = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(`../fixtures/${name}`, import.meta.url), "utf8")) as Record<string, unknown>

/** Polls `check` until it returns a value, or fails after `timeoutMs`. */
export const eventually = <A, E, R>(check: Effect.Effect<A | undefined, E, R>, timeoutMs = 20_000, what = "condition") =>
  check.pipe(
    Effect.flatMap((value) => (value === undefined ? Effect.fail("not yet" as const) : Effect.succeed(value))),
    Effect.retry({ schedule: Schedule.spaced(Duration.millis(50)), while: (e) => e === "not yet" }),
    Effect.timeoutOrElse({ duration: Duration.millis(timeoutMs), orElse: () => Effect.fail(new Error(`${what} not reached within ${timeoutMs} ms`)) })
  )

/**
 * An MES on a plain connection to the daemon's command topic `P/{scope}/commands` (one wildcard
 * level, the default): it sends requests with its response topic and a correlation id and keeps
 * every reply it receives, so a test can count them.
 */
export const makeMes = (url: string, prefix: string, scope = SCOPE) =>
  Effect.gen(function* () {
    const connection = yield* makeMqttConnection({ url, clientIdBase: "mes", connectTimeoutMs: 5000 })
    const replyTopic = `${prefix}/replies/mes-${randomUUID().slice(0, 8)}`
    const commandTopic = `${prefix}/${scope}/commands`
    const replies: Array<IncomingMessage> = []
    yield* (yield* connection.subscribe(replyTopic)).pipe(
      Stream.runForEach((m) => Effect.sync(() => replies.push(m)).pipe(Effect.andThen(m.ack))),
      Effect.forkScoped
    )

    /** Sends a request; returns its correlation id, which finds the reply. */
    const send = (type: string, data: unknown, extensions: Record<string, string> = {}) =>
      Effect.gen(function* () {
        const correlationId = randomUUID()
        yield* connection.publish(commandTopic, makeCloudEvent({ source: MES_SOURCE, type, subject: scope, data, extensions }), {
          responseTopic: replyTopic,
          correlationId
        })
        return correlationId
      })

    /** Every reply received so far to `correlationId`, decoded. */
    const repliesTo = (correlationId: string): ReadonlyArray<CloudEvent> => {
      const wanted = Buffer.from(correlationId.replaceAll("-", ""), "hex")
      return replies.flatMap((m) => (m.correlationData?.equals(wanted) && Result.isSuccess(m.decoded) ? [m.decoded.success] : []))
    }

    /** Waits for the reply to `correlationId`. */
    const replyTo = (correlationId: string, timeoutMs = 20_000) =>
      eventually(Effect.sync(() => repliesTo(correlationId)[0]), timeoutMs, `reply to ${correlationId}`)

    /** Sends a request, waits for its reply and fails unless it is NO_ERROR. */
    const ok = (type: string, data: unknown, extensions: Record<string, string> = {}) =>
      Effect.gen(function* () {
        const reply = yield* replyTo(yield* send(type, data, extensions))
        const status = (reply.data as { ReturnStatus?: number } | undefined)?.ReturnStatus
        if (status !== ReturnStatus.NO_ERROR) return yield* Effect.fail(new Error(`${type} answered ${JSON.stringify(reply.data)}`))
        return reply
      })

    return { connection, replies, send, repliesTo, replyTo, ok } as const
  })

export type Mes = Effect.Success<ReturnType<typeof makeMes>>

/** The station configuration and the axle work master, as apps/island-daemon/src/DemoMes.ts sends them. */
export const configureAxleStation = (mes: Mes, workMaster: Record<string, unknown> = fixture("work-master-axle.json")) =>
  Effect.gen(function* () {
    yield* mes.ok(ConfigEventTypes.equipment, { ID: "station-7" })
    yield* mes.ok(ConfigEventTypes.materialclass, { MaterialClassID: "axle" })
    yield* mes.ok(ConfigEventTypes.materialdefinition, { MaterialDefinitionID: "axle-front-a2" })
    yield* mes.ok(ConfigEventTypes.personnel, { ID: "operator-12" })
    yield* mes.ok(ConfigEventTypes.physicalasset, { ID: "nutrunner-3" })
    yield* mes.ok(ConfigEventTypes.workmaster, workMaster)
  })

/** An axle job order with the given id. */
export const axleJobOrder = (id: string) => ({ ...fixture("job-order.json"), JobOrderID: id })

/** The job order's normalized state name and version, or `undefined` when it does not exist. */
export const jobOrderOf = (id: string) =>
  Effect.flatMap(JobOrderDao, (dao) => dao.get(id)).pipe(
    Effect.map((doc) => {
      const decoded = decodeJobOrderRecord(doc.doc)
      return { state: Result.isSuccess(decoded) ? normalizedName(decoded.success.state) : "malformed", version: doc.version }
    }),
    Effect.catchTag("NotFound", () => Effect.succeed(undefined))
  )

/**
 * Until the publisher has mirrored every change of `scope` (its cursor at the stream's newest
 * entry): after it, a daemon with nothing else to do writes only on its own clock (heartbeats,
 * leases), so a snapshot taken then stays equal while nobody acts.
 */
export const publisherCaughtUp = (scope: string) =>
  eventually(
    Effect.gen(function* () {
      const latest = yield* (yield* ChangeStream).latestId(scope)
      const cursor = yield* (yield* PublisherCursors).get(scope)
      return latest._tag === "Some" && cursor._tag === "Some" && latest.value === cursor.value ? true : undefined
    }),
    20_000,
    `the publisher caught up with scope ${scope}`
  )

/** Every entry of a scope's change stream, oldest first. */
export const allChanges = (scope: string) =>
  Effect.gen(function* () {
    const stream = yield* ChangeStream
    const entries: Array<ChangeEntry> = []
    let after = "0"
    for (;;) {
      const page = yield* stream.read(scope, { after, count: 1000 })
      entries.push(...page.entries)
      if (page.entries.length === 0) return entries
      after = page.next
    }
  })

/** The ids of the job responses of a scope in a state (every page). */
export const responsesInState = (scope: string, state: string) =>
  Effect.gen(function* () {
    const dao = yield* JobResponseDao
    const ids: Array<string> = []
    let cursor = "0"
    do {
      const page = yield* dao.byState(scope, state, cursor, 1000)
      ids.push(...page.ids)
      cursor = page.next ?? "0"
    } while (cursor !== "0")
    return ids
  })

/**
 * Checks one job order's change history: versions 1, 2, 3... without gap or repeat, and the
 * stored document at the last one.
 */
export const historyProblems = (id: string, changes: ReadonlyArray<ChangeEntry>, storedVersion: number): ReadonlyArray<string> => {
  const versions = changes.filter((c) => c.kind === "joborder" && c.id === id).map((c) => c.version)
  const problems: Array<string> = []
  versions.forEach((v, i) => {
    if (v !== i + 1) problems.push(`${id}: change ${i + 1} has version ${v} (versions ${versions.join(",")})`)
  })
  if (versions.at(-1) !== storedVersion) problems.push(`${id}: stored version ${storedVersion}, last change version ${versions.at(-1)}`)
  return problems
}

/**
 * A station for the axle recipe over MQTT, deterministic: every command is answered after
 * `delayMs`, the QA check passes, and the first torque check of every fifth job fails, so those
 * jobs take the rework loop once. Needs the store (it reads which jobs wait for its events).
 */
export const axleStation = (url: string, prefix: string, delayMs = 5) =>
  Effect.gen(function* () {
    const checks = new Map<string, number>()
    const reworked = new Set<string>()
    const station = yield* makeSimulatedStation({
      url,
      topics: { prefix, wildcardLevels: 1 },
      source: "urn:test:station-7",
      onCommand: (command) => ({ data: { done: command.action }, delayMs }),
      events: {
        "com.example.station.qa.v1": () => ({ passed: true }),
        "com.example.station.torque.v1": (jobId) => {
          const n = (checks.get(jobId) ?? 0) + 1
          checks.set(jobId, n)
          const ok = n > 1 || Number(jobId.slice(-2)) % 5 !== 0
          if (!ok) reworked.add(jobId)
          return { torque_ok: ok, torque_nm: ok ? 85 : 78 }
        }
      },
      eventPollMs: 10
    })
    return { station, reworked }
  })

/**
 * The job-level checks of a finished batch: every job order Ended_Completed with a gapless
 * history, exactly one job response each (listed once in Ended_Completed) and exactly one
 * `ResultUpdate` change entry each. Returns the problems found (empty when all is well).
 */
export const batchProblems = (ids: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const problems: Array<string> = []
    const changes = yield* allChanges(SCOPE)
    const completed = yield* responsesInState(SCOPE, "Ended_Completed")
    const responses = yield* JobResponseDao
    for (const id of ids) {
      const order = yield* jobOrderOf(id)
      if (order?.state !== "Ended_Completed") problems.push(`${id}: job order is ${order?.state}`)
      else problems.push(...historyProblems(id, changes, order.version))
      const response = yield* Effect.result(responses.byOrder(id))
      if (Result.isFailure(response)) problems.push(`${id}: no job response (${response.failure._tag})`)
      else if (response.success.id !== `${id}-response` || response.success.state !== "Ended_Completed") {
        problems.push(`${id}: job response ${response.success.id} in ${response.success.state}`)
      }
      const listed = completed.filter((r) => r === `${id}-response`).length
      if (listed !== 1) problems.push(`${id}: listed ${listed} times in Ended_Completed`)
      const updates = changes.filter((c) => c.kind === "jobresponse" && c.change === "ResultUpdate" && c.id === `${id}-response`).length
      if (updates !== 1) problems.push(`${id}: ${updates} ResultUpdate change entries`)
    }
    if (completed.length !== ids.length) problems.push(`${completed.length} job responses in Ended_Completed for ${ids.length} jobs`)
    return problems
  })

/** How many of the jobs have ended completed. */
export const completedCount = (ids: ReadonlyArray<string>) =>
  Effect.map(Effect.forEach(ids, (id) => jobOrderOf(id)), (orders) => orders.filter((o) => o?.state === "Ended_Completed").length)
