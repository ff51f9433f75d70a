import { Cause, Clock, Effect, Exit, Layer, Option } from "effect"
import {
  backgroundLogStorage,
  executionLookupLayer,
  LogStorage,
  StorageAvailability,
  type StorageState,
  StorageRole,
  storageDatabase,
  storageRoleLayer,
  withoutLogStorage
} from "@microdcs/execution-log"
import { ExecutionLogStore } from "@microdcs/store"
import type { DaemonConfig } from "./DaemonConfig.js"
import type { RoleHealth } from "./RoleHealth.js"
import { RecipePinning } from "./RecipePinning.js"

/**
 * The execution log past the engine in the daemon: the storage role when this instance runs it
 * (committing log keys into PostgreSQL at `PG_URL`, or into an embedded PGlite on a thread of
 * this process, keeping its data in `PG_DATA_DIR`), and the readers' side the HTTP tree uses (the
 * lookup over Valkey and the same database; Valkey alone when there is none). The database starts
 * in the background: the island serves while it starts or while a `PG_URL` server is not up yet,
 * commits wait for it, and readiness says which; an embedded one whose thread dies is started
 * again, readiness waiting for it as for an outage. The pinned recipe digests ride along for the
 * catalogue.
 */
export const executionLogLayer = (config: DaemonConfig) => {
  const runsStorage = config.roles.has("storage")
  // A reader instance (storage role off) still reads storage when it is told where it is.
  const storage =
    runsStorage || config.pgUrl !== undefined
      ? backgroundLogStorage(storageDatabase(config.pgUrl, { dataDir: config.pgDataDir }))
      : withoutLogStorage
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

/** The health of a database that is not known to be available, or `undefined` when it is. */
const byState = (state: StorageState, now: number): RoleHealth | undefined => {
  switch (state._tag) {
    case "Starting":
      return { ok: true, detail: "starting the database; commits wait for it" }
    case "Waiting":
      return { ok: false, reason: `waiting for PostgreSQL (${Math.round((now - state.since) / 1000)} s): ${state.reason}` }
    case "Available":
      return undefined
  }
}

/**
 * The storage role's health for `/readyz`: its poller runs and its database answers a query
 * within a second. While the database starts the role is healthy and says so (`detail`): commits
 * wait for it; while it is waited for (not up yet, an outage) the role is not.
 */
export const storageReadiness = Effect.gen(function* () {
  const role = yield* Effect.serviceOption(StorageRole)
  const storage = yield* Effect.serviceOption(LogStorage)
  const availability = yield* Effect.serviceOption(StorageAvailability)
  return Effect.gen(function* () {
    if (Option.isNone(role) || Option.isNone(storage)) return { ok: false, reason: "the storage role is not running" } satisfies RoleHealth
    if (Option.isSome(availability)) {
      const known = byState(yield* availability.value.state, yield* Clock.currentTimeMillis)
      if (known !== undefined) return known
    }
    const ping = yield* Effect.exit(storage.value.readKeys([PROBE_KEY]).pipe(Effect.timeout("1 second")))
    return Exit.isSuccess(ping) ? ({ ok: true } satisfies RoleHealth) : ({ ok: false, reason: `waiting for PostgreSQL: it does not answer (${firstLine(ping.cause)})` } satisfies RoleHealth)
  })
})
