import type { LeaseLost, NoPermission, StateMoved, StoreUnavailable, UnknownOutcome, WrongType } from "@microdcs/store"

/**
 * What `handle` fails with: the store could not be reached, refused the configured ACL user, or
 * answered with a corrupted index, or a job order kept moving past the retry budget. None of these is the sender's fault, so
 * none becomes a reply: the caller leaves the message unprocessed (the dedupe claim is
 * released) and the broker's redelivery tries again. `LeaseLost` comes only from a request
 * handled with its claim (`handle`'s `claimed`) whose claim another holder took before the
 * create that would have marked it done: nothing was written.
 */
export type JobControlFailure = StoreUnavailable | UnknownOutcome | NoPermission | WrongType | StateMoved | LeaseLost
