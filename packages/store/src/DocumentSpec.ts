import type { Effect } from "effect"
import type { KeyPartError } from "@microdcs/keyschema"
import type { ScriptDescriptor, WriteReply } from "@microdcs/lua-scripts"
import type { ExpectedVersion, StoredDocument } from "./Document.js"
import type { ConnectionError, InvalidInput, WrongType } from "./Errors.js"

/**
 * What a document type tells {@link makeDocumentDao}: its keys, its put and delete scripts and
 * how to call them. Everything else (checks, operation ids, the read-recheck retry, the
 * unknown-outcome check, WRONGTYPE and the reply mapping) the generic DAO does the same way for
 * every type. Builders are plain synchronous functions: they run on every write.
 */

/** What every document put carries; a type adds its own fields (priority, state, ...). */
export interface DocumentPutInput {
  readonly id: string
  readonly scope: string
  /** The document as JSON text. */
  readonly doc: string
  readonly expectedVersion: ExpectedVersion
  /** The method that caused the write; default `put`. */
  readonly change?: string | undefined
  /** Operation id stored with the write; default a new UUID. */
  readonly op?: string | undefined
}

/** What every document delete carries. */
export interface DocumentDeleteInput {
  readonly id: string
  /** Default -1 (unconditional). */
  readonly expectedVersion?: ExpectedVersion | undefined
  readonly op?: string | undefined
  /** Default `delete`. */
  readonly change?: string | undefined
}

/** The keys and arguments every document write script takes, built by the generic DAO. */
export interface DocumentWrite {
  /** The document key. */
  readonly key: string
  /** The scope's change stream: the script appends the write's change entry here. */
  readonly changes: string
  /** The `scopes` registry. */
  readonly scopes: string
  /** The arguments of every document write script (the scope of a delete is the stored one). */
  readonly args: {
    readonly expectedVersion: number
    readonly scope: string
    readonly id: string
    readonly op: string
    readonly change: string
    /** `nudge:changes`, published with the scope. */
    readonly nudgeChannel: string
  }
}

/** One script call: its named keys and its arguments. */
export interface ScriptCall<K extends string, A> {
  readonly keys: Readonly<Record<K, string>>
  readonly args: A
}

/** Stored hash fields a write read, in the order its spec named them (`null` = absent). */
export type StoredFields = ReadonlyArray<string | null>

/** Builds one attempt's call from the stored fields it read; a refused key part is bad input. */
export type AttemptCall<K extends string, A> = (stored: StoredFields) => ScriptCall<K, A> | KeyPartError

export interface PutSpec<I extends DocumentPutInput, K extends string, A, R extends WriteReply> {
  readonly script: ScriptDescriptor<K, A, R>
  /** Checks of the type's own fields, after the expected version and before the document text. */
  readonly check?: ((input: I) => InvalidInput | undefined) | undefined
  /**
   * Hash fields of the stored document that some keys depend on (the old by-state set): read
   * before the script, which re-checks them and replies `retry` when they moved. Absent: the
   * put sends its script at once, without a read.
   */
  readonly read?: ReadonlyArray<string> | undefined
  /**
   * Builds the keys that depend on the input alone, before anything is sent. Returns the call
   * itself when no key depends on a stored field, else the builder of each attempt (given the
   * fields of `read`). Build `args` as one object literal: on this path a spread
   * (`{ ...write.args, x }`) costs more than the rest of the put's own work.
   */
  readonly call: (input: I, write: DocumentWrite) => ScriptCall<K, A> | AttemptCall<K, A> | KeyPartError
}

export interface DeleteSpec<I extends DocumentDeleteInput, K extends string, A, R extends WriteReply> {
  readonly script: ScriptDescriptor<K, A, R>
  /** Stored fields the keys depend on besides the scope, which every delete reads. */
  readonly read?: ReadonlyArray<string> | undefined
  /** Builds the call from the stored scope (in `write`) and the fields of `read`. */
  readonly call: (input: I, write: DocumentWrite, stored: StoredFields) => ScriptCall<K, A> | KeyPartError
}

/** A paged index of a scope: its key and one read of `count` items from `offset`. */
export interface ListSpec<Item> {
  readonly key: (scope: string) => string | KeyPartError
  readonly read: (key: string, offset: number, count: number) => Effect.Effect<ReadonlyArray<Item>, WrongType | ConnectionError>
}

export interface DocumentSpec<
  Put extends DocumentPutInput,
  PK extends string,
  PA,
  PR extends WriteReply,
  Delete extends DocumentDeleteInput,
  DK extends string,
  DA,
  DR extends WriteReply,
  Stored extends StoredDocument
> {
  /** The `kind` of the document's change entries (`joborder`), also used in operation names. */
  readonly kind: string
  /** What a `NotFound` calls the document: `{noun} {id} does not exist`. */
  readonly noun: string
  readonly documentKey: (id: string) => string | KeyPartError
  /** Parses a stored hash; default {@link parseDocumentHash} (`v`, `scope`, `op`, `doc`). */
  readonly parse?: ((id: string, hash: Record<string, string>) => Stored | undefined) | undefined
  readonly put: PutSpec<Put, PK, PA, PR>
  readonly delete: DeleteSpec<Delete, DK, DA, DR>
  /** The scope's paged list, if the type has one. */
  readonly list?: ListSpec<unknown> | undefined
}

/** One page of a list; `next` is the offset of the next page, or `null` on the last one. */
export interface DocumentPage<Item> {
  readonly items: ReadonlyArray<Item>
  readonly next: number | null
}

/** Where a page starts and how many items it holds (default 0 and 100). */
export interface PageRequest {
  readonly offset?: number | undefined
  readonly count?: number | undefined
}
