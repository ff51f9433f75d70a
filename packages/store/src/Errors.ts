import { Data } from "effect"

/**
 * The failures a caller of the store can act on. Anything else is a defect:
 * a bug, not an error type.
 */

/** The document or key does not exist. */
export class NotFound extends Data.TaggedError("NotFound")<{
  readonly key: string
  readonly message: string
}> {}

/** The stored version is not the expected one; nothing was written. Re-read, recompute, retry. */
export class VersionConflict extends Data.TaggedError("VersionConflict")<{
  readonly key: string
  /** 0 = create only, -1 never conflicts, n > 0 = the version the caller read. */
  readonly expected: number
  /** The stored version; 0 when the document does not exist. */
  readonly actual: number
}> {
  override get message() {
    return `version conflict on ${this.key}: expected ${this.expected}, stored ${this.actual}`
  }
}

/** A put tried to move a document to another scope; scopes are immutable (delete, then put). */
export class ScopeConflict extends Data.TaggedError("ScopeConflict")<{
  readonly key: string
  readonly storedScope: string
  readonly requestedScope: string
}> {
  override get message() {
    return `${this.key} belongs to scope '${this.storedScope}', not '${this.requestedScope}'`
  }
}

/** An index precondition kept moving past the retry budget. Retry later. */
export class StateMoved extends Data.TaggedError("StateMoved")<{
  readonly key: string
  readonly attempts: number
}> {}

/** A dedupe key or lease is held by someone else. */
export class Busy extends Data.TaggedError("Busy")<{
  readonly key: string
  /** How long the current holder's lease still runs, in ms (0 when it has no TTL). */
  readonly remainingMs: number
}> {}

/** The caller no longer holds the lease it tried to use (it expired or another holder took it). */
export class LeaseLost extends Data.TaggedError("LeaseLost")<{
  readonly key: string
  readonly message: string
}> {}

/** The scope's job acceptance limit is reached; nothing was written. */
export class LimitReached extends Data.TaggedError("LimitReached")<{
  readonly key: string
  readonly limit: number
  readonly count: number
}> {}

/** A key the write needs holds another Valkey type (a corrupted index); nothing was written. */
export class WrongType extends Data.TaggedError("WrongType")<{
  readonly key: string
  readonly expected: string
  readonly actual: string
}> {
  override get message() {
    return `${this.key} holds a ${this.actual}, expected a ${this.expected}; run the index check`
  }
}

/** Bad input: a key part, a document that is not JSON, a value over a size limit. Nothing was written. */
export class InvalidInput extends Data.TaggedError("InvalidInput")<{
  readonly field: string
  readonly message: string
}> {}

/** The command was never sent (connection refused or down, server loading or read-only). Safe to retry. */
export class StoreUnavailable extends Data.TaggedError("StoreUnavailable")<{
  readonly operation: string
  readonly message: string
}> {}

/** The command was sent but no reply came. Check the operation id, then retry or accept. */
export class UnknownOutcome extends Data.TaggedError("UnknownOutcome")<{
  readonly operation: string
  readonly message: string
}> {}

/**
 * The server's ACL refused the command (`NOPERM`): the configured user may not use this key or
 * command, typically an ACL user limited to another island's prefix. Nothing was executed.
 * Fix the user's ACL or the prefix; retrying does not help.
 */
export class NoPermission extends Data.TaggedError("NoPermission")<{
  /** The refused key (the first key of a script call), or "" when the command names none. */
  readonly key: string
  /** The Valkey command, e.g. `HGETALL` or `EVALSHA`. */
  readonly command: string
  /** What the store was doing (the operation or script name). */
  readonly operation: string
  readonly message: string
}> {}

/** The failures of any call to the server: never sent, sent without reply, or refused by the ACL. */
export type ConnectionError = StoreUnavailable | UnknownOutcome | NoPermission

/**
 * The event was already applied (to `jobId`) within its lifetime; nothing was written. A
 * redelivery: acknowledge it and move on.
 */
export class DuplicateEvent extends Data.TaggedError("DuplicateEvent")<{
  readonly key: string
  readonly jobId: string
  /** With several applied events in one write (`compareAndSetMany`): which one (0-based) was applied before. */
  readonly eventIndex?: number | undefined
}> {
  override get message() {
    const which = this.eventIndex === undefined ? "" : ` (applied event ${this.eventIndex} of the write)`
    return `${this.key} was already applied to job ${this.jobId}${which}`
  }
}
