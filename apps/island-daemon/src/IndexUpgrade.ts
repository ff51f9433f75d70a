import { Cause, Clock, Effect, Layer } from "effect"
import { IndexMaintenance, type UpgradeResult } from "@microdcs/store"
import type { DaemonConfig } from "./DaemonConfig.js"

const failureText = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause) as { _tag?: unknown; message?: unknown }
  return typeof error === "object" && error !== null ? `${String(error._tag ?? "Error")}: ${String(error.message ?? "")}` : String(error)
}

/** The line that ends an upgrade that walked; one that left something for an operator says so. */
const logDone = (result: Extract<UpgradeResult, { _tag: "Upgraded" }>, durationMs: number) => {
  const { summary } = result
  const unrepaired = summary.unrepaired.length
  const line = unrepaired === 0 ? Effect.logInfo("index upgrade done") : Effect.logWarning("index upgrade done; some inconsistencies need an operator (microdcs-admin index check)")
  return line.pipe(
    Effect.annotateLogs({ phases: result.phases.join(","), scanned: summary.scanned, repaired: summary.repaired, removed: summary.removed, unrepaired, durationMs })
  )
}

/**
 * Brings the island's indexes up to this release: the store's `IndexMaintenance.upgrade` rebuilds
 * the phases newer than the island's record, under a lease, so of the daemons that start at once
 * one walks. An island already current costs one read and logs nothing above debug. A failure is
 * logged and the next start tries again; it never ends the daemon.
 */
export const upgradeIndexes = (holder: string) =>
  Effect.gen(function* () {
    const maintenance = yield* IndexMaintenance
    const startedAt = yield* Clock.currentTimeMillis
    const result = yield* maintenance.upgrade({
      holder,
      onStart: (phases) => Effect.logInfo("index upgrade started").pipe(Effect.annotateLogs({ phases: phases.join(",") }))
    })
    const durationMs = (yield* Clock.currentTimeMillis) - startedAt
    switch (result._tag) {
      case "Current":
        return yield* Effect.logDebug("indexes current: no upgrade needed")
      case "Busy":
        return yield* Effect.logInfo("index upgrade left to another instance, which holds its lease")
      case "Upgraded":
        return yield* logDone(result, durationMs)
    }
  }).pipe(
    Effect.catchCause((cause) =>
      Cause.hasInterruptsOnly(cause)
        ? Effect.failCause(cause)
        : Effect.logWarning("index upgrade failed; the next start tries again").pipe(Effect.annotateLogs({ error: failureText(cause) }))
    )
  )

/**
 * The upgrade in the background of the island's scope (INDEX_UPGRADE=on, the default): started
 * with the roles, it never delays readiness, and a shutdown interrupts it (nothing recorded, so
 * the next start walks again).
 */
export const indexUpgradeRole = (config: DaemonConfig) =>
  config.indexUpgrade ? Layer.effectDiscard(Effect.forkScoped(upgradeIndexes(config.instanceId))) : Layer.empty
