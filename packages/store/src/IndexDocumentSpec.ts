import type { Effect } from "effect"
import type { FamilyTemplates, KeyFamilySet } from "@microdcs/keyschema"
import type { RepairReply } from "@microdcs/lua-scripts"
import type { ConnectionError } from "./Errors.js"
import type { ValkeyService } from "./Valkey.js"

// What an extension declares for documentIndexedFamily (IndexDocumentFamily.ts); apart from it so
// the inspection and the family builder both read it without importing each other.

/** A document of a family, as read for its indexes. */
export interface IndexedDocument {
  readonly id: string
  readonly key: string
  /** The `v` field exactly as stored: the repair script compares it as text. */
  readonly version: string
  readonly scope: string
  /** The declared `fields`, as stored (`null` when absent). */
  readonly fields: Readonly<Record<string, string | null>>
}

/** One index entry a document implies: the member `id` of the key of `index` with `parts`. */
export interface ImpliedEntry<I extends string = string> {
  readonly index: I
  readonly parts: Readonly<Record<string, string>>
  /** In a sorted set: the score the document implies; omitted when any score stands. */
  readonly score?: number | undefined
  /** The document must NOT be a member (another document rules it out, e.g. its job order is retired). */
  readonly absent?: boolean | undefined
}

/** An index family of the family: its type, and when a document belongs in one of its keys. */
export interface DocumentIndexRule {
  readonly type: "set" | "zset"
  /**
   * Field values a document must hold to belong in the key of `parts` (the stored `scope` among
   * them, for a key with a `{scope}` part). A key with a `{scope}` part belongs to that scope;
   * one without belongs to none, and only an unscoped walk judges its members.
   */
  readonly belongsWhen: (parts: Readonly<Record<string, string>>) => ReadonlyArray<readonly [field: string, value: string]>
}

/** One entry to re-establish, with its key, as {@link DocumentIndexSpec.repair} gets it. */
export interface EntryToRepair {
  readonly index: string
  readonly key: string
  readonly type: "set" | "zset"
  readonly score: number | undefined
  /** The document must not be a member there: the repair removes it. */
  readonly absent?: boolean | undefined
}

/**
 * A family of hash documents (fields `v` and `scope`, key with an `{id}` part) indexed by sets
 * and sorted sets of document ids: what {@link documentIndexedFamily} needs to check and rebuild it.
 */
export interface DocumentIndexSpec<T extends FamilyTemplates> {
  /** The phase name in progress reports. */
  readonly name: string
  /** The version of what it derives (default 1): see `IndexedFamily.version`. */
  readonly version?: number | undefined
  /** The family's key families: its documents and its indexes. */
  readonly keyFamilies: KeyFamilySet<T>
  /** The key family of its documents. */
  readonly document: keyof T & string
  /** The hash fields its indexes derive from, besides `v` and `scope`. */
  readonly fields?: ReadonlyArray<string> | undefined
  /** Its index key families. */
  readonly indexes: { readonly [F in keyof T & string]?: DocumentIndexRule }
  /**
   * Values read from other keys for a batch of documents, one record per document, merged into
   * each document's `fields` before {@link entriesOf} judges it (e.g. whether its job order is live).
   */
  readonly related?: ((valkey: ValkeyService, documents: ReadonlyArray<IndexedDocument>) => Effect.Effect<
    ReadonlyArray<Readonly<Record<string, string | null>>>,
    ConnectionError
  >) | undefined
  /** Every entry a document implies. Parts that form no key make the document malformed. */
  readonly entriesOf: (document: IndexedDocument) => ReadonlyArray<ImpliedEntry<keyof T & string>>
  /**
   * Re-establishes the entries of one document with the family's own script. The script must
   * re-check, atomically, that the document still holds `version` (and `scope`) and reply as
   * the core repair scripts do: `ok` with the entries it added, `gone`, `retry` when the document
   * changed since the read, `wrongtype` for a key of another type (nothing written). The scope
   * is registered afterwards; the script need not touch `scopes`.
   */
  readonly repair: (input: {
    readonly valkey: ValkeyService
    readonly document: IndexedDocument
    readonly entries: ReadonlyArray<EntryToRepair>
  }) => Effect.Effect<RepairReply, ConnectionError>
}
