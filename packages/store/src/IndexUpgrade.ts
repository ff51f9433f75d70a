import { Duration, Effect } from "effect"
import type { ConnectionError, InvalidInput, WrongType } from "./Errors.js"
import type { IndexedFamily } from "./IndexedFamily.js"
import type { IndexContext } from "./IndexFinding.js"
import { rebuildIndexes, type RebuildProgress, type RebuildSummary } from "./IndexRebuild.js"
import { leaseOn } from "./Lease.js"
import { typedCommand } from "./TypeGuard.js"

/** How long the upgrade's lease lives unless renewed; it is renewed every third of it while the walk runs. */
export const INDEX_UPGRADE_LEASE_MS = 30_000

/** One phase of the registry: the version this release builds, and the one the island's marker records (0: none). */
export interface IndexPhaseVersion {
  readonly phase: string
  readonly version: number
  readonly recorded: number
}

export interface UpgradeOptions {
  /** Who runs it (the lease's holder), e.g. the daemon's instance id. */
  readonly holder: string
  /** The lease's lifetime; default {@link INDEX_UPGRADE_LEASE_MS}. */
  readonly leaseMs?: number | undefined
  /** Called once the lease is held and phases are due, before the walk: the phases it rebuilds. */
  readonly onStart?: ((phases: ReadonlyArray<string>) => Effect.Effect<void>) | undefined
  readonly onProgress?: ((progress: RebuildProgress) => Effect.Effect<void>) | undefined
}

/**
 * What an upgrade did: `Current` (every phase recorded at its version; nothing walked), `Busy`
 * (another holder has the lease; nothing walked), or `Upgraded` (these phases rebuilt and recorded).
 */
export type UpgradeResult =
  | { readonly _tag: "Current" }
  | { readonly _tag: "Busy" }
  | { readonly _tag: "Upgraded"; readonly phases: ReadonlyArray<string>; readonly summary: RebuildSummary }

type UpgradeError = InvalidInput | WrongType | ConnectionError

export const familyVersion = (family: IndexedFamily): number => family.version ?? 1

/** A recorded version that is no positive integer (written by hand, garbled) counts as none. */
const decodeVersion = (stored: string | undefined): number => {
  const n = stored !== undefined && /^\d+$/.test(stored) ? Number(stored) : 0
  return Number.isSafeInteger(n) ? n : 0
}

/** Every registered phase with its version and the one the marker records. */
export const phaseVersions = (
  ctx: IndexContext,
  families: ReadonlyArray<IndexedFamily>,
  marker: string
): Effect.Effect<ReadonlyArray<IndexPhaseVersion>, WrongType | ConnectionError> =>
  typedCommand(ctx.valkey, "read index versions", marker, "hash", (c) => c.hgetall(marker)).pipe(
    Effect.map((recorded) => families.map((f) => ({ phase: f.name, version: familyVersion(f), recorded: decodeVersion(recorded[f.name]) })))
  )

/** Records each family at its version (never lowers one: a newer release's record stays). */
export const recordVersions = (
  ctx: IndexContext,
  families: ReadonlyArray<IndexedFamily>,
  marker: string
): Effect.Effect<void, WrongType | ConnectionError> =>
  Effect.gen(function* () {
    const current = yield* phaseVersions(ctx, families, marker)
    const raised = current.filter((p) => p.version > p.recorded).flatMap((p) => [p.phase, String(p.version)])
    if (raised.length > 0) yield* typedCommand(ctx.valkey, "record index versions", marker, "hash", (c) => c.hset(marker, ...raised))
  })

const duePhases = (ctx: IndexContext, families: ReadonlyArray<IndexedFamily>, marker: string) =>
  Effect.map(phaseVersions(ctx, families, marker), (versions) => families.filter((family) => familyVersion(family) > (versions.find((v) => v.phase === family.name)?.recorded ?? 0)))

/**
 * Rebuilds, in registry order, the phases whose version is newer than the marker records (all
 * of them when there is no marker: an island of an older release may lack any index; on an
 * empty island that walk is short), then records them. Under a lease, so of several callers at
 * once one walks and the others get `Busy`; the lease is renewed while the walk runs. A walk
 * that fails or is interrupted records nothing, so the next upgrade walks again.
 */
export const upgradeIndexes = (
  ctx: IndexContext,
  families: ReadonlyArray<IndexedFamily>,
  keys: { readonly marker: string; readonly lease: string },
  options: UpgradeOptions
): Effect.Effect<UpgradeResult, UpgradeError> =>
  Effect.gen(function* () {
    if ((yield* duePhases(ctx, families, keys.marker)).length === 0) return { _tag: "Current" } as const
    const lease = leaseOn(ctx.valkey, keys.lease)
    const leaseMs = options.leaseMs ?? INDEX_UPGRADE_LEASE_MS
    if (!(yield* lease.acquire(options.holder, leaseMs))) return { _tag: "Busy" } as const
    const walk = Effect.gen(function* () {
      // Read again under the lease: a holder that just finished has recorded its phases.
      const due = yield* duePhases(ctx, families, keys.marker)
      if (due.length === 0) return { _tag: "Current" } as const
      yield* Effect.forkScoped(keepLease(lease.renew(options.holder, leaseMs), leaseMs))
      yield* (options.onStart ?? (() => Effect.void))(due.map((f) => f.name))
      const summary = yield* rebuildIndexes(ctx, due, options.onProgress ?? (() => Effect.void))
      yield* recordVersions(ctx, due, keys.marker)
      return { _tag: "Upgraded", phases: due.map((f) => f.name), summary } as const
    })
    return yield* Effect.scoped(walk).pipe(Effect.ensuring(Effect.ignore(lease.release(options.holder))))
  })

/** Renews the lease every third of its life; a renewal that fails is tried again at the next tick (a lost lease only means two walks, which is safe). */
const keepLease = <E>(renew: Effect.Effect<boolean, E>, leaseMs: number) =>
  Effect.forever(Effect.ignore(renew).pipe(Effect.delay(Duration.millis(leaseMs / 3))))
