import { Cause, Clock, Effect, Result, Exit, Option } from "effect"
import { commandFilters, MqttConnection, type MqttConnectionService, sharedCommandFilters, unshared } from "@microdcs/cloudevents-mqtt"
import { stationEventsFilter } from "@microdcs/island-mqtt"
import { Publisher, type PublisherService } from "@microdcs/publisher"
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
const attempt = <A, E, R>(read: Effect.Effect<A, E, R>): Effect.Effect<Result.Result<A, string>, never, R> =>
  read.pipe(
    Effect.timeout("1 second"),
    Effect.exit,
    Effect.map((exit) => (Exit.isSuccess(exit) ? Result.succeed(exit.value) : Result.fail(causeText(exit.cause))))
  )

const causeText = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause) as { _tag?: unknown; message?: unknown }
  const text = typeof error === "object" && error !== null ? `${String(error._tag ?? "Error")}: ${String(error.message ?? "")}` : String(error)
  return text.split("\n")[0]!.slice(0, 300)
}

/** A free publisher lease is normal for a moment (between a release and the next take); not for longer. */
const LEASE_FREE_GRACE_MS = 10_000

/** What the readiness checks share: the island's services, the filters its roles need, and how long the lease has been free. */
interface ReadinessDeps {
  readonly config: DaemonConfig
  readonly health: StoreHealth["Service"]
  readonly heartbeat: SfcHeartbeat["Service"]
  readonly connection: MqttConnectionService
  readonly publisher: Option.Option<PublisherService>
  readonly lease: PublisherLease["Service"]
  readonly storage: Effect.Success<typeof storageReadiness>
  readonly commandFilterList: ReadonlyArray<string>
  readonly stationFilter: string | undefined
  readonly heartbeatMaxAgeMs: number
  leaseFreeSince: number | undefined
}

const jobControlHealth = (d: ReadinessDeps, subscriptions: ReadonlyArray<string>): RoleHealth => {
  const missing = d.commandFilterList.filter((f) => !subscriptions.includes(f))
  return missing.length === 0 ? ok : failing(`not subscribed to ${missing.join(", ")}`)
}

const engineHealth = (d: ReadinessDeps, subscriptions: ReadonlyArray<string>): RoleHealth =>
  d.stationFilter === undefined || subscriptions.some((s) => unshared(s) === d.stationFilter) ? ok : failing(`not subscribed to ${d.stationFilter}`)

const sweepHealth = (d: ReadinessDeps) =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const beat = yield* attempt(d.heartbeat.last)
    if (Result.isFailure(beat)) return failing(`cannot read the timer sweep heartbeat (${beat.failure})`)
    const at = Option.getOrElse(beat.success, () => Number.NaN)
    if (!Number.isFinite(at)) return failing("the timer sweep has not written its heartbeat")
    return now - at <= d.heartbeatMaxAgeMs ? ok : failing(`the timer sweep heartbeat is ${Math.round((now - at) / 1000)} s old`)
  })

const publishingHealth = (d: ReadinessDeps) =>
  Effect.gen(function* () {
    if (Option.isNone(d.publisher)) return ok
    if (yield* d.publisher.value.isActive) {
      d.leaseFreeSince = undefined
      return ok
    }
    const holder = yield* attempt(d.lease.holder)
    if (Result.isFailure(holder)) return failing(`cannot read the publisher lease (${holder.failure})`)
    const now = yield* Clock.currentTimeMillis
    if (Option.isSome(holder.success) && holder.success.value !== d.config.instanceId) {
      d.leaseFreeSince = undefined
      return ok
    }
    d.leaseFreeSince ??= now
    return now - d.leaseFreeSince <= LEASE_FREE_GRACE_MS ? ok : failing(`standby, but nobody has held the publisher lease for ${Math.round((now - d.leaseFreeSince) / 1000)} s`)
  })

/** The health of each role this instance runs. */
const roleHealths = (d: ReadinessDeps, subscriptions: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const roles: Partial<Record<Role, RoleHealth>> = {}
    if (d.config.roles.has("job-control")) roles["job-control"] = jobControlHealth(d, subscriptions)
    if (d.config.roles.has("engine")) roles.engine = engineHealth(d, subscriptions)
    if (d.config.roles.has("sweep")) roles.sweep = yield* sweepHealth(d)
    if (d.config.roles.has("publisher")) roles.publisher = yield* publishingHealth(d)
    if (d.config.roles.has("storage")) roles.storage = yield* d.storage
    return roles
  })

/** One `/readyz` answer: the checks, each role's health and every problem found. */
const readinessReport = (d: ReadinessDeps) =>
  Effect.gen(function* () {
    const ping = yield* attempt(d.health.ping)
    const status = yield* d.connection.status
    const subscriptions = yield* d.connection.subscriptions
    const intake = yield* d.connection.intake
    const roles = yield* roleHealths(d, subscriptions)
    const needsSubscriptions = d.config.roles.has("job-control") || d.config.roles.has("engine")
    const checks = {
      valkey: Result.isSuccess(ping),
      mqtt: status === "connected",
      subscribed: !needsSubscriptions || subscriptions.length > 0,
      intake: !intake.stalled,
      roles: Object.values(roles).every((r) => r.ok)
    }
    const problems = [
      ...(Result.isFailure(ping) ? [`valkey: ${ping.failure}`] : []),
      ...(status === "connected" ? [] : [`mqtt: ${status}`]),
      ...(intake.stalled ? [`mqtt intake stalled: ${intake.reason ?? "the broker delivers nothing"}; reconnecting`] : []),
      ...Object.entries(roles).flatMap(([role, health]) => (health.ok ? [] : [`${role}: ${health.reason}`]))
    ]
    return { checks, roles, problems } satisfies ReadinessReport
  })

/** The filters the roles must hold: job control's command filters (shared ones with a shared group), the engine's station events filter. */
const subscriptionFiltersOf = (config: DaemonConfig) => {
  const topics = { prefix: config.mqtt.topicPrefix, discriminator: config.mqtt.discriminator, wildcardLevels: config.mqtt.wildcardLevels }
  return {
    commandFilterList: Result.getOrElse(config.mqtt.sharedGroup === undefined ? commandFilters(topics) : sharedCommandFilters(topics, config.mqtt.sharedGroup), () => []),
    stationFilter: Result.getOrUndefined(stationEventsFilter(topics))
  }
}

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
    const d: ReadinessDeps = {
      config,
      health: yield* StoreHealth,
      heartbeat: yield* SfcHeartbeat,
      connection: yield* MqttConnection,
      publisher: yield* Effect.serviceOption(Publisher),
      lease: yield* PublisherLease,
      storage: yield* storageReadiness,
      ...subscriptionFiltersOf(config),
      // A sweep round can take a while on a loaded island; far beyond that it is not running.
      heartbeatMaxAgeMs: Math.max(15_000, 20 * config.engine.sweepIntervalMs),
      leaseFreeSince: undefined
    }
    return readinessReport(d)
  })
