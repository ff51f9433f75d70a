import { Context, type Deferred, Effect, Layer } from "effect"
import { JobControl, jobControlLayer } from "@microdcs/job-control"
import type { JobOrderDao, JobResponseDao, ScopeRegistry, SfcStateDao, TriggerStore } from "@microdcs/store"
import { ActionSettings } from "./ConsoleActions.js"
import type { ConsoleServices } from "./ConsoleServices.js"
import type { Journal } from "@microdcs/journal"
import type { DaemonConfig } from "./DaemonConfig.js"
import type { ExecutionServices } from "./ExecutionServices.js"
import type { HistorySource } from "./HistorySource.js"
import type { HttpUser } from "./HttpUsers.js"
import { errorReply } from "./HttpReply.js"
import type { Metrics } from "./Metrics.js"
import { makeReadiness, type ReadinessReport } from "./Readiness.js"

/**
 * The island's services the routes read. A route module that needs another one adds it here; the
 * island provides them all once it runs.
 */
export type IslandServices = ReadServices | ActionServices

type ReadServices = JobOrderDao | JobResponseDao | ScopeRegistry | SfcStateDao | TriggerStore | ConsoleServices | Journal | ExecutionServices | HistorySource

/** What the console's actions run with: a job-control processor of their own (as the CLI's), the engine's log settings. */
type ActionServices = JobControl | ActionSettings

/** The actions' services over the island's store, with the daemon's job-control settings. */
const actionServices = (config: DaemonConfig) =>
  Layer.merge(
    jobControlLayer({ defaultAcceptanceLimit: config.defaultAcceptanceLimit, retentionMs: config.retentionMs, recipeDigests: config.recipeDigests }),
    Layer.succeed(ActionSettings, { log: config.engine })
  )

/**
 * What needs the island up (the store, the MQTT connection): absent while it is starting or
 * stopping, and then `/readyz` answers 503 and the API 503.
 */
export interface IslandEndpoints {
  /** Each readiness check by name, each role's health and the problems; ready only when all checks pass. */
  readonly readiness: Effect.Effect<ReadinessReport>
  readonly services: Context.Context<IslandServices>
}

/** `/readyz` and the routes' services over the running island. */
export const makeIslandEndpoints = (config: DaemonConfig) =>
  Effect.gen(function* () {
    const readiness = yield* makeReadiness(config)
    const read = yield* Effect.context<ReadServices>()
    const actions = yield* Layer.build(actionServices(config))
    return { readiness, services: Context.merge(read, actions) } satisfies IslandEndpoints
  })

/** What every route module may read; the server provides it. */
export class HttpContext extends Context.Service<
  HttpContext,
  {
    readonly metrics: Metrics
    /** The running island, or `undefined` while it starts or stops. */
    readonly island: () => IslandEndpoints | undefined
    /** The users whose bearer tokens the routes behind `requireToken` take; none: open to read, no actions. */
    readonly users: ReadonlyArray<HttpUser>
    /** Done once the server begins to close: a long-lived answer (a stream) ends then. */
    readonly closing: Deferred.Deferred<void>
  }
>()("@microdcs/island-daemon/HttpContext") {}

/**
 * Runs a handler that reads the island's services over the running island; 503 while it starts
 * or stops.
 */
export const withIsland = <A, E, R>(handler: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const island = (yield* HttpContext).island()
    if (island === undefined) return yield* errorReply(503, "not-ready", "the island is starting or stopping")
    return yield* Effect.provide(handler, island.services)
  })
