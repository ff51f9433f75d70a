import type { Effect, Option } from "effect"
import type { WriteReply } from "@microdcs/lua-scripts"
import type { StoredDocument, Written } from "./Document.js"
import { type AnyDelete, type AnyFailure, type AnyPut, type AnySpec, documentDeps } from "./DocumentDeps.js"
import { remove } from "./DocumentDelete.js"
import { type PagedList, pagedList } from "./DocumentList.js"
import { put } from "./DocumentPut.js"
import { type PutOutcome, putMany } from "./DocumentPutMany.js"
import { get, getMany, outcome } from "./DocumentReads.js"
import type { DocumentDeleteInput, DocumentPutInput, DocumentSpec, ListSpec } from "./DocumentSpec.js"
import type { ConnectionError, InvalidInput, NotFound, StateMoved, WrongType } from "./Errors.js"
import type { ValkeyService } from "./Valkey.js"
import type { WriteReplyError } from "./WriteReplies.js"

export type { PagedList } from "./DocumentList.js"
export type { PutOutcome } from "./DocumentPutMany.js"

/** The methods every document DAO has; a type's own DAO adds its lookups (`byOrder`, ...). */
export interface DocumentDao<Put, Delete, Stored, PutError, DeleteError> {
  readonly put: (input: Put) => Effect.Effect<Written, PutError | InvalidInput | ConnectionError>
  /**
   * Many puts in one batch (see {@link PutOutcome}): each item is checked as `put` checks it,
   * and the valid ones are sent together. Each item succeeds or fails on its own, never all
   * or nothing; the outcomes come back in the order of `inputs`.
   */
  readonly putMany: (inputs: ReadonlyArray<Put>) => Effect.Effect<ReadonlyArray<PutOutcome<PutError | InvalidInput | ConnectionError>>, InvalidInput>
  readonly get: (id: string) => Effect.Effect<Stored, NotFound | WrongType | InvalidInput | ConnectionError>
  /** The documents of `ids` in one round trip, in order; missing ones are skipped. */
  readonly getMany: (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Stored>, WrongType | InvalidInput | ConnectionError>
  readonly delete: (
    input: Delete
  ) => Effect.Effect<Written, DeleteError | NotFound | StateMoved | WrongType | InvalidInput | ConnectionError>
  /** The unknown-outcome check: `Some(version)` when the write `op` of `id` landed (see `operationLanded`). */
  readonly outcome: (id: string, op: string) => Effect.Effect<Option.Option<number>, WrongType | InvalidInput | ConnectionError>
}

/** A {@link DocumentDao} whose spec has a list: the scope's paged list too. */
export interface ListedDocumentDao<Put, Delete, Stored, PutError, DeleteError, Item>
  extends DocumentDao<Put, Delete, Stored, PutError, DeleteError> {
  readonly list: PagedList<Item>
}

/**
 * The document DAO of one type from its spec (see {@link DocumentSpec}): put, get, getMany,
 * delete, outcome and, with a list spec, a paged list. A put checks its input synchronously,
 * builds its keys, then sends one script (or, with `read`, reads the fields its keys depend on
 * first and re-reads while the script says they moved); an `UnknownOutcome` is resolved with
 * the op check. A delete reads the stored scope, and the fields of its `read`, the same way.
 */
export function makeDocumentDao<
  Put extends DocumentPutInput,
  PK extends string,
  PA,
  PR extends WriteReply,
  Delete extends DocumentDeleteInput,
  DK extends string,
  DA,
  DR extends WriteReply,
  Item,
  Stored extends StoredDocument = StoredDocument
>(
  valkey: ValkeyService,
  spec: DocumentSpec<Put, PK, PA, PR, Delete, DK, DA, DR, Stored> & { readonly list: ListSpec<Item> }
): ListedDocumentDao<Put, Delete, Stored, WriteReplyError<PR>, WriteReplyError<DR>, Item>
export function makeDocumentDao<
  Put extends DocumentPutInput,
  PK extends string,
  PA,
  PR extends WriteReply,
  Delete extends DocumentDeleteInput,
  DK extends string,
  DA,
  DR extends WriteReply,
  Stored extends StoredDocument = StoredDocument
>(
  valkey: ValkeyService,
  spec: DocumentSpec<Put, PK, PA, PR, Delete, DK, DA, DR, Stored>
): DocumentDao<Put, Delete, Stored, WriteReplyError<PR>, WriteReplyError<DR>>
// The implementation works on the widest types; the overloads above give each spec its exact ones.
export function makeDocumentDao(
  valkey: ValkeyService,
  spec: AnySpec
): DocumentDao<AnyPut, AnyDelete, StoredDocument, AnyFailure, AnyFailure> & { readonly list?: PagedList<unknown> } {
  const deps = documentDeps(valkey, spec)
  const dao = {
    put: (input: AnyPut) => put(deps, input),
    putMany: (inputs: ReadonlyArray<AnyPut>) => putMany(deps, inputs),
    get: (id: string) => get(deps, id),
    getMany: (ids: ReadonlyArray<string>) => getMany(deps, ids),
    delete: (input: AnyDelete) => remove(deps, input),
    outcome: (id: string, op: string) => outcome(deps, id, op)
  }
  return spec.list === undefined ? dao : { ...dao, list: pagedList(spec.list) }
}
