import type { FamilyTemplates, KeySchemaOf } from "@microdcs/keyschema"
import type {
  IndexEntryWithoutDocument,
  Inconsistency,
  Membership,
  ScopeNotRegistered,
  StaleMember,
  StalePointer,
  WrongTypeKey
} from "./IndexFacts.js"
import type { ValkeyService } from "./Valkey.js"

/** What the check and the rebuild share while they walk an island. */
export interface IndexContext {
  readonly valkey: ValkeyService
  /** The island's key schema with the key families of every registered family (an extension's too). */
  readonly keys: KeySchemaOf<FamilyTemplates>
  readonly scopesKey: string
  readonly nudgeChannel: string
  /** Only this scope is inspected (and repaired), when set. */
  readonly scope: string | undefined
}

export const inScope = (ctx: IndexContext, scope: string | null): boolean => ctx.scope === undefined || scope === ctx.scope

interface DocumentBase {
  readonly id: string
  readonly key: string
  /** The `v` field exactly as stored; the repair scripts compare it as text. */
  readonly version: string
  readonly scope: string
}

/** A job order as read for its indexes. */
export interface JobOrderRead extends DocumentBase {
  readonly family: "jobOrder"
  /** The `priority` field; `null` on a document without it. */
  readonly priority: string | null
  /** No TTL: listed. A retired job order has a TTL and is not. */
  readonly persistent: boolean
}

/** A job response as read for its indexes, plus what its by-order pointer named at that time. */
export interface JobResponseRead extends DocumentBase {
  readonly family: "jobResponse"
  readonly state: string
  readonly orderId: string
  /** The `start` field; `null` on a document written before it existed. */
  readonly start: string | null
  /** The list score its read implies; `undefined` = unknown (keep an existing score, else 0). */
  readonly score: number | undefined
  /** The id the by-order pointer named ("" = none, or no order). */
  readonly pointerId: string
}

export interface WorkMasterRead extends DocumentBase {
  readonly family: "workMaster"
}

export type DocumentRead = JobOrderRead | JobResponseRead | WorkMasterRead

/**
 * One thing the walk found wrong, with what its repair needs. `fix` says which repair applies;
 * `problems` (or `problem`) is what the check reports.
 */
export type Finding =
  /** A document whose own entries are missing or wrong: the per-document repair script. */
  | { readonly fix: "document"; readonly read: DocumentRead; readonly problems: ReadonlyArray<Inconsistency> }
  /** A set or sorted-set member that does not belong: removed if it still does not. */
  | { readonly fix: "member"; readonly index: Membership; readonly problem: IndexEntryWithoutDocument | StaleMember }
  /** A by-order pointer to a response that does not carry the order: deleted if it still names it. */
  | {
      readonly fix: "pointer"
      readonly orderId: string
      readonly pointerId: string
      readonly problem: IndexEntryWithoutDocument | StalePointer
    }
  /** An index key or `scopes` of the wrong type: deleted, then rebuilt from the documents. */
  | { readonly fix: "type"; readonly problem: WrongTypeKey }
  /** A scope with reference data or an acceptance limit that is not registered. */
  | { readonly fix: "scope"; readonly problem: ScopeNotRegistered }
  /** Not an index problem (a malformed document, a document key of another type): reported only. */
  | { readonly fix: "none"; readonly problem: Inconsistency }

export const problemsOf = (finding: Finding): ReadonlyArray<Inconsistency> =>
  finding.fix === "document" ? finding.problems : [finding.problem]
