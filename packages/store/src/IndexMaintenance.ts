import { Effect, Context, Layer } from "effect"
import { type ConnectionError, InvalidInput, type WrongType } from "./Errors.js"
import { checkIndexes } from "./IndexCheck.js"
import type { Inconsistency } from "./IndexFacts.js"
import type { IndexContext } from "./IndexFinding.js"
import { rebuildIndexes, type RebuildOptions, type RebuildSummary } from "./IndexRebuild.js"
import { IndexRegistry, registrySchema } from "./IndexRegistry.js"
import { type IndexPhaseVersion, phaseVersions, recordVersions, type UpgradeOptions, type UpgradeResult, upgradeIndexes } from "./IndexUpgrade.js"
import { Valkey } from "./Valkey.js"

export interface CheckOptions {
  /** Check only this scope. Default: every scope. */
  readonly scope?: string | undefined
}

/**
 * Index maintenance: `check` lists every inconsistency between the
 * documents and their indexes; `rebuild` repairs them from the documents. Both walk the families
 * of the {@link IndexRegistry} (the core ones unless an extension added its own) with SCAN on the
 * primary in batches: maintenance for an operator or the admin CLI, not a hot path. The rebuild
 * is safe while the island is live. `upgrade` rebuilds only the phases a release made newer than
 * the island's marker (`index:versions`) records; a daemon runs it at start.
 */
export class IndexMaintenance extends Context.Service<IndexMaintenance>()("@microdcs/store/IndexMaintenance", {
  make: Effect.gen(function* () {
    const valkey = yield* Valkey
    const { families } = yield* IndexRegistry
    const scopesKey = valkey.keys.key("scopes", {}) as string
    const nudgeChannel = valkey.keys.key("nudge", { kind: "changes" }) as string
    const marker = valkey.keys.key("indexVersions", {}) as string
    const lease = valkey.keys.key("indexUpgradeLease", {}) as string

    const context = (scope: string | undefined): Effect.Effect<IndexContext, InvalidInput> =>
      Effect.gen(function* () {
        // A registry that cannot be walked is refused before anything is read or written.
        const keys = registrySchema(valkey.keys, families)
        if (keys instanceof InvalidInput) return yield* keys
        // A scope that could never be stored is bad input, not "nothing found".
        if (scope !== undefined) yield* valkey.key("jobOrderList", { scope })
        return { valkey, keys, scopesKey, nudgeChannel, scope }
      })

    /** Every inconsistency (of one scope, when given); read only. */
    const check = (options: CheckOptions = {}): Effect.Effect<ReadonlyArray<Inconsistency>, InvalidInput | ConnectionError> =>
      context(options.scope).pipe(Effect.flatMap((ctx) => checkIndexes(ctx, families)))

    /**
     * Recomputes every index (of one scope, when given) from the documents, reporting progress per
     * batch. A rebuild of the whole island records every phase in the marker, as an upgrade would.
     */
    const rebuild = (options: RebuildOptions = {}): Effect.Effect<RebuildSummary, InvalidInput | WrongType | ConnectionError> =>
      context(options.scope).pipe(
        Effect.flatMap((ctx) =>
          rebuildIndexes(ctx, families, options.onProgress ?? (() => Effect.void)).pipe(
            Effect.tap(() => (options.scope === undefined ? recordVersions(ctx, families, marker) : Effect.void))
          )
        )
      )

    /** Rebuilds the phases newer than the island's marker records, under a lease, and records them (IndexUpgrade.ts). */
    const upgrade = (options: UpgradeOptions): Effect.Effect<UpgradeResult, InvalidInput | WrongType | ConnectionError> =>
      context(undefined).pipe(Effect.flatMap((ctx) => upgradeIndexes(ctx, families, { marker, lease }, options)))

    /** Every registered phase with its version and the version the island's marker records (0: none). */
    const versions: Effect.Effect<ReadonlyArray<IndexPhaseVersion>, InvalidInput | WrongType | ConnectionError> = context(undefined).pipe(
      Effect.flatMap((ctx) => phaseVersions(ctx, families, marker))
    )

    /** The names of the registered families, in walk order: the phases of `RebuildProgress`. */
    const phases: ReadonlyArray<string> = families.map((family) => family.name)

    return { check, rebuild, upgrade, versions, phases } as const
  })
}) {
  // Fresh: each provide builds its own, reading the registry in context there. effect 4 shares a
  // layer between nested provides, so `Default.pipe(Layer.provide(IndexRegistry.with(...)))` inside
  // a provide of `storeLayer` (which holds `Default`) would otherwise reuse the core-only instance.
  static readonly DefaultWithoutDependencies = Layer.fresh(Layer.effect(this, this.make))
  static readonly Default = this.DefaultWithoutDependencies
}
