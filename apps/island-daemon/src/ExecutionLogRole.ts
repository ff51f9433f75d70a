import { Cause, Duration, Effect, Exit, Layer, Option, type Redacted, Schedule } from "effect"
import {
  executionLookupLayer,
  LogStorage,
  logStorageLayer,
  StorageRole,
  storageDatabase,
  storageRoleLayer,
  withoutLogStorage
} from "@microdcs/execution-log"
import { ExecutionLogStore } from "@microdcs/store"
import type { DaemonConfig } from "./DaemonConfig.js"
import type { RoleHealth } from "./RoleHealth.js"
import { RecipePinning } from "./RecipePinning.js"

/** Reasons a connection fails that a database coming up cures (not a wrong password or database name). */
const NOT_UP_YET = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN", "57P03"])

const notUpYet = (error: unknown): boolean => {
  const e = error as { readonly _tag?: unknown; readonly message?: unknown; readonly cause?: { readonly code?: unknown } } | null
  if (e === null || typeof e !== "object" || e._tag !== "SqlError") return false
  return e.message === "PgClient: Connection timed out" || NOT_UP_YET.has(String(e.cause?.code))
}

/**
 * The storage database. At `PG_URL` a server that is not up yet is waited for, as Valkey and the
 * broker are (the island stays not ready, the log says why); any other failure ends the start.
 */
const database = (url: Redacted.Redacted<string> | undefined) =>
  url === undefined
    ? storageDatabase(undefined)
    : storageDatabase(url).pipe(
        Layer.tapError((error) =>
          notUpYet(error)
            ? Effect.logWarning("execution log storage: PostgreSQL at PG_URL is not reachable yet; trying again").pipe(
                Effect.annotateLogs({ error: `${error._tag}: ${error.message} (${String((error.cause as { code?: unknown } | undefined)?.code ?? "")})` })
              )
            : Effect.void
        ),
        Layer.retry(Schedule.exponential(Duration.millis(200)).pipe(Schedule.union(Schedule.spaced(Duration.seconds(5))), Schedule.whileInput(notUpYet)))
      )

/**
 * The execution log past the engine (execution-log.md §2, §3) in the daemon: the storage role
 * when this instance runs it (committing log keys into PostgreSQL at `PG_URL`, or into an embedded
 * PGlite in this process when no URL is set), and the readers' side the HTTP tree uses (the
 * lookup over Valkey and the same database; Valkey alone when there is none). The pinned recipe
 * digests ride along for the catalogue.
 */
export const executionLogLayer = (config: DaemonConfig) => {
  const runsStorage = config.roles.has("storage")
  // A reader instance (storage role off) still reads storage when it is told where it is.
  const storage = runsStorage || config.pgUrl !== undefined ? logStorageLayer.pipe(Layer.provideMerge(database(config.pgUrl))) : withoutLogStorage
  const role = runsStorage ? storageRoleLayer({ consumer: config.instanceId }) : Layer.empty
  return Layer.mergeAll(role, executionLookupLayer, RecipePinning.layer(config.recipeDigests)).pipe(
    Layer.provideMerge(storage),
    Layer.provideMerge(ExecutionLogStore.Default)
  )
}

const firstLine = (cause: Cause.Cause<unknown>) => {
  const error = Cause.squash(cause) as { _tag?: unknown; message?: unknown }
  const text = typeof error === "object" && error !== null ? `${String(error._tag ?? "Error")}: ${String(error.message ?? "")}` : String(error)
  return text.split("\n")[0]!.slice(0, 300)
}

/** A key no log value has (log keys start with the prefix): reading it is a round trip to the database. */
const PROBE_KEY = ":readiness-probe"

/**
 * The storage role's health for `/readyz`: its poller runs and its database answers a query
 * within a second.
 */
export const storageReadiness = Effect.gen(function* () {
  const role = yield* Effect.serviceOption(StorageRole)
  const storage = yield* Effect.serviceOption(LogStorage)
  return Effect.gen(function* () {
    if (Option.isNone(role) || Option.isNone(storage)) return { ok: false, reason: "the storage role is not running" } satisfies RoleHealth
    const ping = yield* Effect.exit(storage.value.readKeys([PROBE_KEY]).pipe(Effect.timeout("1 second")))
    return Exit.isSuccess(ping) ? ({ ok: true } satisfies RoleHealth) : ({ ok: false, reason: `PostgreSQL does not answer (${firstLine(ping.cause)})` } satisfies RoleHealth)
  })
})
