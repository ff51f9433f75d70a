import type { Effect } from "effect"
import type { KeyFamilySet } from "@microdcs/keyschema"
import type { ConnectionError } from "./Errors.js"
import type { Inconsistency } from "./IndexFacts.js"
import type { IndexContext } from "./IndexFinding.js"
import type { RepairTally } from "./IndexRepair.js"

/** What one inspected batch of a family holds: how much it looked at, and what it found wrong. */
export interface FamilyBatch<F> {
  /** Keys and index entries inspected in this batch. */
  readonly scanned: number
  readonly findings: ReadonlyArray<F>
}

/**
 * One family of documents and the indexes derived from them, as index maintenance sees it: the
 * core families (job orders, job responses, work masters, reference lists, the `scopes`
 * registry) and any an extension registers in {@link IndexRegistry}. `check` reports the
 * problems of every finding of `inspect`; `rebuild` hands each finding back to `repair` as soon
 * as its batch is inspected. `F` is the family's own finding: what its repair needs.
 *
 * For hash documents indexed by sets and sorted sets, `documentIndexedFamily` builds one from a
 * declaration. The methods are written as methods on purpose: a registry holds families of
 * different `F`, and it only ever hands a family its own findings.
 */
export interface IndexedFamily<F = unknown> {
  /** Its phase in progress reports (`RebuildProgress.phase`); unique in a registry. */
  readonly name: string
  /**
   * The version of what the family derives (default 1): raise it in a release that changes the
   * family's indexes, or adds the family to an island that has data, so the index upgrade at
   * start rebuilds this phase once on an island whose marker records a lower one.
   */
  readonly version?: number | undefined
  /** Key families the family uses beyond the core ones; registered on the island's schema for the walk (`ctx.keys`). */
  readonly keyFamilies?: KeyFamilySet | undefined
  /**
   * Walks its documents and index keys (SCAN, in batches; in the context's scope only, when it
   * has one) and hands every inspected batch to `handle`, at least once per SCAN batch. Read only.
   */
  inspect(ctx: IndexContext, handle: (batch: FamilyBatch<F>) => Effect.Effect<void, ConnectionError>): Effect.Effect<void, ConnectionError>
  /** What the check reports for one finding. */
  problemsOf(finding: F): ReadonlyArray<Inconsistency>
  /**
   * Repairs one finding, safe on a live island: a script re-checks what the finding was judged
   * from, and a document that moved is read again (at most `MAX_INDEX_RETRIES` times). What it
   * did goes into `tally`, what it cannot repair into `tally.unrepaired`.
   */
  repair(ctx: IndexContext, finding: F, tally: RepairTally): Effect.Effect<void, ConnectionError>
}
