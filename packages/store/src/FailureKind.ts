import { StoreUnavailable, UnknownOutcome } from "./Errors.js"

/** Server replies that mean "not executed, try again later". */
const transientReply = /^(READONLY|LOADING|MASTERDOWN|BUSY|TRYAGAIN|NOREPLICAS)\b/

/** Client errors raised before a command reached the socket. */
const notSent = /enableOfflineQueue|Stream isn't writeable|ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ENETUNREACH|All sentinels are unreachable/

export const isNoScript = (error: unknown): boolean => error instanceof Error && error.message.startsWith("NOSCRIPT")

export const isReplyError = (error: unknown): error is Error => error instanceof Error && error.name === "ReplyError"

/**
 * Sorts a failed command into "never sent" (safe to retry), "sent, no reply" (check the op id),
 * or a bug (any other server reply error, returned as `undefined` so the caller can die with it).
 */
export const classifyFailure = (operation: string, error: unknown): StoreUnavailable | UnknownOutcome | undefined => {
  const message = error instanceof Error ? error.message : String(error)
  if (isReplyError(error)) {
    return transientReply.test(message) ? new StoreUnavailable({ operation, message }) : undefined
  }
  if (notSent.test(message)) return new StoreUnavailable({ operation, message })
  return new UnknownOutcome({ operation, message })
}
