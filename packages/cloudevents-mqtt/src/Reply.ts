import { Either } from "effect"
import { bytesToUuid, type CloudEvent, makeCloudEvent } from "./CloudEvent.js"
import type { CodecErrorKind } from "./Errors.js"
import type { IncomingMessage } from "./Incoming.js"

/** What a reply to a request carries besides the caller's event. */
export interface PreparedReply {
  readonly event: CloudEvent
  /** The request's correlation data, echoed verbatim (undefined when the request had none). */
  readonly correlationData: Buffer | undefined
}

/** The request's CloudEvent id, also from a request that did not decode (when its `id` property is readable). */
export const requestIdOf = (request: IncomingMessage): string | undefined => {
  if (Either.isRight(request.decoded)) return request.decoded.right.id
  const id: unknown = request.properties.userProperties?.["id"]
  return typeof id === "string" && id.length > 0 ? id : undefined
}

/**
 * The reply event (island.md §2): `causationid` = the request's id, `correlationid` = the request's
 * when its correlation data is a UUID, and the request's correlation data echoed as it came. The
 * caller's event keeps its own (new) id and our source.
 */
export const prepareReply = (request: IncomingMessage, event: CloudEvent): PreparedReply => {
  const extensions: Record<string, string> = { ...event.extensions }
  delete extensions["correlationid"]
  const causationid = requestIdOf(request)
  if (causationid !== undefined) extensions["causationid"] = causationid
  const correlationid = request.correlationData !== undefined ? bytesToUuid(request.correlationData) : undefined
  if (correlationid !== undefined) extensions["correlationid"] = correlationid
  return { event: { ...event, extensions }, correlationData: request.correlationData }
}

/** Keeps a text that came from untrusted input sendable as an MQTT string: no NUL, no lone surrogate, bounded. */
const sendable = (text: string): string => text.slice(0, 1000).replaceAll("\u0000", "\uFFFD").toWellFormed()

/**
 * An error reply for bad input: extension attributes `mdcserrorkind` and `mdcserrormessage`
 * (island.md §2), no data.
 */
export const makeErrorReply = (input: {
  readonly source: string
  readonly type: string
  readonly kind: CodecErrorKind | string
  readonly message: string
  readonly subject?: string | undefined
}): CloudEvent =>
  makeCloudEvent({
    source: input.source,
    type: input.type,
    subject: input.subject,
    extensions: { mdcserrorkind: sendable(input.kind), mdcserrormessage: sendable(input.message) }
  })
