import type { NoPermission, StateMoved, StoreUnavailable, UnknownOutcome, WrongType } from "@microdcs/store"

/**
 * What `handle` fails with: the store could not be reached, refused the configured ACL user, or
 * answered with a corrupted index, or a job order kept moving past the retry budget. None of these is the sender's fault, so
 * none becomes a reply: the caller leaves the message unprocessed (the dedupe claim is
 * released) and the broker's redelivery tries again.
 */
export type JobControlFailure = StoreUnavailable | UnknownOutcome | NoPermission | WrongType | StateMoved
