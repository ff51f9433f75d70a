import { Effect } from "effect"
import type { ConnectionError } from "./Errors.js"
import type { IndexedFamily } from "./IndexedFamily.js"
import { type Inconsistency, inconsistencyId } from "./IndexFacts.js"
import type { IndexContext } from "./IndexFinding.js"
import type { RepairTally } from "./IndexRepair.js"

/** A phase of the walk: the name of a registered family (`scopes`, `joborder`, ..., or an extension's). */
export type IndexPhase = string

/** Reported after every inspected batch (at least once per SCAN batch); counts are running totals. */
export interface RebuildProgress {
  /** The family being walked. */
  readonly phase: IndexPhase
  readonly scanned: number
  readonly repaired: number
  readonly removed: number
}

export interface RebuildOptions {
  /** Rebuild only the indexes of this scope (and register it). Default: every scope. */
  readonly scope?: string | undefined
  readonly onProgress?: ((progress: RebuildProgress) => Effect.Effect<void>) | undefined
}

export interface RebuildSummary {
  /** Keys and index entries inspected. */
  readonly scanned: number
  /** Index entries added or corrected, scopes registered. */
  readonly repaired: number
  /** Stale index entries removed. */
  readonly removed: number
  /** Index keys (or `scopes`) that held the wrong type, deleted and rebuilt from the documents. */
  readonly deletedKeys: ReadonlyArray<string>
  /** What a rebuild cannot repair (malformed documents, documents that kept moving): for an operator. */
  readonly unrepaired: ReadonlyArray<Inconsistency>
}

/**
 * Walks the island family by family, in registry order, and has each family repair its
 * findings as soon as their batch is inspected. Safe while the island is live: every repair
 * re-checks inside its script, and no index of the right type is ever deleted, so readers never
 * see an index emptied for the rebuild.
 */
export const rebuildIndexes = (
  ctx: IndexContext,
  families: ReadonlyArray<IndexedFamily>,
  onProgress: (progress: RebuildProgress) => Effect.Effect<void>
): Effect.Effect<RebuildSummary, ConnectionError> =>
  Effect.gen(function* () {
    const tally: RepairTally = { repaired: 0, removed: 0, deletedKeys: [], unrepaired: [] }
    let scanned = 0
    for (const family of families) {
      yield* family.inspect(ctx, (batch) =>
        Effect.gen(function* () {
          for (const finding of batch.findings) yield* family.repair(ctx, finding, tally)
          scanned += batch.scanned
          yield* onProgress({ phase: family.name, scanned, repaired: tally.repaired, removed: tally.removed })
        })
      )
    }
    const unrepaired = new Map(tally.unrepaired.map((i) => [inconsistencyId(i), i] as const))
    return {
      scanned,
      repaired: tally.repaired,
      removed: tally.removed,
      deletedKeys: [...new Set(tally.deletedKeys)],
      unrepaired: [...unrepaired.values()]
    }
  })
