import { Effect } from "effect"
import type { WriteReply, WrongTypeReply } from "@microdcs/lua-scripts"
import { LimitReached, NotFound, ScopeConflict, StateMoved, VersionConflict, WrongType } from "./Errors.js"
import { MAX_INDEX_RETRIES, moved, type Moved } from "./IndexPrecondition.js"

/**
 * The one mapping from a write script's reply to the store's typed errors. Every document DAO,
 * the SFC state DAO and DAOs built outside the store (through `makeDocumentDao`) go through it,
 * so a status means the same error everywhere.
 */

/** The typed error each failing write status maps to. */
export interface WriteFailures {
  readonly conflict: VersionConflict
  readonly scope: ScopeConflict
  readonly limit: LimitReached
  readonly wrongtype: WrongType
  readonly notfound: NotFound
  /** Only after the retry budget: a single `retry` reply means "read again" (see {@link settleWrite}). */
  readonly retry: StateMoved
}

/** The errors a script whose replies are `R` can end in. */
export type WriteReplyError<R extends { readonly status: string }> = WriteFailures[Exclude<R["status"], "ok"> & keyof WriteFailures]

/** What the mapping needs to know about the write besides its reply. */
export interface WriteContext {
  /** The document key. */
  readonly key: string
  readonly expectedVersion: number
  /** The scope the write named (a delete: the stored scope it read). */
  readonly requestedScope: string
  /** The message of a `notfound` reply; default `{key} does not exist`. */
  readonly notFound?: string | undefined
}

type FailedReply = Exclude<WriteReply, { readonly status: "ok" | "retry" }>

/** The typed error of a failing, final reply (every status but `ok` and `retry`). */
export const writeFailure = <R extends FailedReply>(reply: R, context: WriteContext): WriteFailures[R["status"]] =>
  failureOf(reply, context) as WriteFailures[R["status"]]

const failureOf = (reply: FailedReply, context: WriteContext): WriteFailures[FailedReply["status"]] => {
  switch (reply.status) {
    case "conflict":
      return new VersionConflict({ key: context.key, expected: context.expectedVersion, actual: reply.actual })
    case "scope":
      return new ScopeConflict({ key: context.key, storedScope: reply.storedScope, requestedScope: context.requestedScope })
    case "limit":
      return new LimitReached({ key: context.key, limit: reply.limit, count: reply.count })
    case "wrongtype":
      return wrongTypeError(reply)
    case "notfound":
      return new NotFound({ key: context.key, message: context.notFound ?? `${context.key} does not exist` })
  }
}

/** The typed error of a script's `wrongtype` reply (every script that checks key types gives one). */
export const wrongTypeError = (reply: WrongTypeReply): WrongType =>
  new WrongType({ key: reply.key, expected: reply.expected, actual: reply.actual })

/** The error after the retry budget ran out: the stored values kept moving under the reads. */
export const stateMoved = (key: string): StateMoved => new StateMoved({ key, attempts: MAX_INDEX_RETRIES })

/** What one attempt of a script whose replies are `R` ends in: a version, or {@link moved} when `R` can say `retry`. */
export type Settled<R extends WriteReply> = number | (R extends { readonly status: "retry" } ? Moved : never)

/** The errors of one attempt (a `retry` is not one yet). */
export type SettleError<R extends WriteReply> = WriteReplyError<Exclude<R, { readonly status: "retry" }>>

/**
 * One attempt of a write: the new version, {@link moved} when the script replied `retry` (the
 * stored value the keys were computed from moved: read again), or the typed error.
 */
export const settleWrite = <R extends WriteReply>(
  reply: R,
  context: WriteContext
): Effect.Effect<Settled<R>, SettleError<R>> => {
  const typed = reply as WriteReply
  if (typed.status === "ok") return Effect.succeed(typed.version)
  if (typed.status === "retry") return Effect.succeed(moved as never)
  return Effect.fail(writeFailure(typed, context) as never)
}

/**
 * The reply of a write that read nothing its keys depend on: nothing can have moved, so a
 * `retry` is final and there is no loop to run.
 */
export const settleFinal = <R extends WriteReply>(reply: R, context: WriteContext): Effect.Effect<number, WriteReplyError<R>> => {
  const typed = reply as WriteReply
  if (typed.status === "ok") return Effect.succeed(typed.version)
  return Effect.fail((typed.status === "retry" ? stateMoved(context.key) : writeFailure(typed, context)) as WriteReplyError<R>)
}

/**
 * Maps a final write reply to the new version or the typed error of its status. The error
 * type follows the statuses the script can give. `retry` is not taken here: only the DAO
 * knows what to read again (use {@link settleWrite} in a retry loop).
 */
export const writeResult = <R extends Exclude<WriteReply, { status: "retry" }>>(
  key: string,
  expected: number,
  requestedScope: string,
  reply: R
): Effect.Effect<number, WriteReplyError<R>> => {
  const typed = reply as Exclude<WriteReply, { status: "retry" }>
  if (typed.status === "ok") return Effect.succeed(typed.version)
  return Effect.fail(writeFailure(typed, { key, expectedVersion: expected, requestedScope }) as WriteReplyError<R>)
}
