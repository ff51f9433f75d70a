import { Cause, Clock, Effect, Either, Exit, Option } from "effect"
import { commandFilters, MqttConnection, sharedCommandFilters, unshared } from "@microdcs/cloudevents-mqtt"
import { stationEventsFilter } from "@microdcs/island-mqtt"
import { Publisher } from "@microdcs/publisher"
import { PublisherLease, SfcHeartbeat, StoreHealth } from "@microdcs/store"
import type { DaemonConfig, Role } from "./DaemonConfig.js"
import { storageReadiness } from "./ExecutionLogRole.js"
import type { RoleHealth } from "./RoleHealth.js"

export type { RoleHealth } from "./RoleHealth.js"


/** What `/readyz` answers: ready only when every check passes; `problems` names each failure. */
export interface ReadinessReport {
  readonly checks: Readonly<Record<string, boolean>>
  readonly roles: Readonly<Partial<Record<Role, RoleHealth>>>
  readonly problems: ReadonlyArray<string>
}

const ok: RoleHealth = { ok: true }
const failing = (reason: string): RoleHealth => ({ ok: false, reason })

/**
 * Runs one check's read with a short timeout; a failure of any kind (a typed error, a reply
 * the store treats as a defect such as WRONGTYPE) becomes its one-line text.
 */
const attempt = <A, E, R>(read: Effect.Effect<A, E, R>): Effect.Effect<Either.Either<A, string>, never, R> =>
  read.pipe(
    Effect.timeout("1 second"),
    Effect.exit,
    Effect.map((exit) => (Exit.isSuccess(exit) ? Either.right(exit.value) : Either.left(causeText(exit.cause))))
  )

const causeText = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause) as { _tag?: unknown; message?: unknown }
  const text = typeof error === "object" && error !== null ? `${String(error._tag ?? "Error")}: ${String(error.message ?? "")}` : String(error)
  return text.split("\n")[0]!.slice(0, 300)
}

/** A free publisher lease is normal for a moment (between a release and the next take); not for longer. */
const LEASE_FREE_GRACE_MS = 10_000

/**
 * The readiness of a running island: Valkey answers, MQTT is connected and
 * subscribed, its intake is not stalled (a probe of the connection's own came back, see the MQTT
 * package's intake watch), and each role of this instance is healthy by its own measure:
 * - job-control: every command filter is subscribed;
 * - engine: the station events filter is subscribed (replies and pull events reach the engine);
 * - sweep: the island's timer sweep heartbeat (`sfc:heartbeat`) is fresh;
 * - publisher: this instance holds the lease, or another one does (standby);
 * - storage: the execution log's storage role runs and its PostgreSQL answers (healthy while its
 *   database starts: commits wait for it; not while it waits for PostgreSQL).
 */
export const makeReadiness = (config: DaemonConfig) =>
  Effect.gen(function* () {
    const health = yield* StoreHealth
    const heartbeat = yield* SfcHeartbeat
    const connection = yield* MqttConnection
    const publisher = yield* Effect.serviceOption(Publisher)
    const lease = yield* PublisherLease
    const storage = yield* storageReadiness
    const topics = { prefix: config.mqtt.topicPrefix, discriminator: config.mqtt.discriminator, wildcardLevels: config.mqtt.wildcardLevels }
    const commandFilterList = Either.getOrElse(
      config.mqtt.sharedGroup === undefined ? commandFilters(topics) : sharedCommandFilters(topics, config.mqtt.sharedGroup),
      () => []
    )
    const stationFilter = Either.getOrUndefined(stationEventsFilter(topics))
    // A sweep round can take a while on a loaded island; far beyond that it is not running.
    const heartbeatMaxAgeMs = Math.max(15_000, 20 * config.engine.sweepIntervalMs)
    let leaseFreeSince: number | undefined

    const jobControl = (subscriptions: ReadonlyArray<string>): RoleHealth => {
      const missing = commandFilterList.filter((f) => !subscriptions.includes(f))
      return missing.length === 0 ? ok : failing(`not subscribed to ${missing.join(", ")}`)
    }

    const engine = (subscriptions: ReadonlyArray<string>): RoleHealth =>
      stationFilter === undefined || subscriptions.some((s) => unshared(s) === stationFilter) ? ok : failing(`not subscribed to ${stationFilter}`)

    const sweep = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const beat = yield* attempt(heartbeat.last)
      if (Either.isLeft(beat)) return failing(`cannot read the timer sweep heartbeat (${beat.left})`)
      const at = Option.getOrElse(beat.right, () => Number.NaN)
      if (!Number.isFinite(at)) return failing("the timer sweep has not written its heartbeat")
      return now - at <= heartbeatMaxAgeMs ? ok : failing(`the timer sweep heartbeat is ${Math.round((now - at) / 1000)} s old`)
    })

    const publishing = Effect.gen(function* () {
      if (Option.isNone(publisher)) return ok
      if (yield* publisher.value.isActive) {
        leaseFreeSince = undefined
        return ok
      }
      const holder = yield* attempt(lease.holder)
      if (Either.isLeft(holder)) return failing(`cannot read the publisher lease (${holder.left})`)
      const now = yield* Clock.currentTimeMillis
      if (Option.isSome(holder.right) && holder.right.value !== config.instanceId) {
        leaseFreeSince = undefined
        return ok
      }
      leaseFreeSince ??= now
      return now - leaseFreeSince <= LEASE_FREE_GRACE_MS ? ok : failing(`standby, but nobody has held the publisher lease for ${Math.round((now - leaseFreeSince) / 1000)} s`)
    })

    return Effect.gen(function* () {
      const ping = yield* attempt(health.ping)
      const status = yield* connection.status
      const subscriptions = yield* connection.subscriptions
      const intake = yield* connection.intake
      const roles: Partial<Record<Role, RoleHealth>> = {}
      if (config.roles.has("job-control")) roles["job-control"] = jobControl(subscriptions)
      if (config.roles.has("engine")) roles.engine = engine(subscriptions)
      if (config.roles.has("sweep")) roles.sweep = yield* sweep
      if (config.roles.has("publisher")) roles.publisher = yield* publishing
      if (config.roles.has("storage")) roles.storage = yield* storage
      const needsSubscriptions = config.roles.has("job-control") || config.roles.has("engine")
      const checks = {
        valkey: Either.isRight(ping),
        mqtt: status === "connected",
        subscribed: !needsSubscriptions || subscriptions.length > 0,
        intake: !intake.stalled,
        roles: Object.values(roles).every((r) => r.ok)
      }
      const problems = [
        ...(Either.isLeft(ping) ? [`valkey: ${ping.left}`] : []),
        ...(status === "connected" ? [] : [`mqtt: ${status}`]),
        ...(intake.stalled ? [`mqtt intake stalled: ${intake.reason ?? "the broker delivers nothing"}; reconnecting`] : []),
        ...Object.entries(roles).flatMap(([role, health]) => (health.ok ? [] : [`${role}: ${health.reason}`]))
      ]
      return { checks, roles, problems } satisfies ReadinessReport
    })
  })
