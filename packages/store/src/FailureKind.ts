import { type ConnectionError, NoPermission, StoreUnavailable, UnknownOutcome } from "./Errors.js"

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
export const classifyFailure = (operation: string, error: unknown): ConnectionError | undefined => {
  const message = error instanceof Error ? error.message : String(error)
  if (isReplyError(error)) {
    if (message.startsWith("NOPERM")) return noPermission(operation, error, message)
    return transientReply.test(message) ? new StoreUnavailable({ operation, message }) : undefined
  }
  if (notSent.test(message)) return new StoreUnavailable({ operation, message })
  return new UnknownOutcome({ operation, message })
}

/** The command and arguments the client attaches to a server error reply. */
interface FailedCommand {
  readonly name?: unknown
  readonly args?: ReadonlyArray<unknown>
}

const scriptCommands = new Set(["eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro"])

/**
 * The key a refused command names: after the script and key count for a script call, after
 * STREAMS for a stream read, else the first argument (the key of every single-key command).
 */
const keyOf = (name: string, args: ReadonlyArray<unknown>): string => {
  const text = (value: unknown) => (typeof value === "string" ? value : Buffer.isBuffer(value) ? value.toString("utf8") : "")
  if (scriptCommands.has(name)) return Number(text(args[1])) > 0 ? text(args[2]) : ""
  const streams = args.findIndex((a) => text(a).toUpperCase() === "STREAMS")
  if (streams >= 0) return text(args[streams + 1])
  return text(args[0])
}

/** A NOPERM reply as the store's typed error, naming the key and command the ACL refused. */
const noPermission = (operation: string, error: Error, message: string): NoPermission => {
  const failed = (error as Error & { readonly command?: FailedCommand }).command
  const name = typeof failed?.name === "string" ? failed.name.toLowerCase() : ""
  const key = keyOf(name, failed?.args ?? [])
  return new NoPermission({ key, command: name.toUpperCase(), operation, message: `${message} (${operation}${key ? ` on ${key}` : ""})` })
}
