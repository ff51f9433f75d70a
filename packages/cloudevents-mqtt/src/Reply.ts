import { Result } from "effect"
import { bytesToUuid, type CloudEvent, makeCloudEvent } from "./CloudEvent.js"
import type { CodecErrorKind } from "./Errors.js"
import type { IncomingMessage } from "./Incoming.js"
import { isMqttString, toMqttString } from "./MqttString.js"

/** What a reply to a request carries besides the caller's event. */
export interface PreparedReply {
  readonly event: CloudEvent
  /** The request's correlation data, echoed verbatim (undefined when the request had none). */
  readonly correlationData: Buffer | undefined
}

/**
 * The request's CloudEvent id, also from a request that did not decode (when its `id` property is
 * readable), made sendable: it is echoed as `causationid`, and a broker that does not check what
 * it forwards could have passed on what mosquitto would refuse from us.
 */
export const requestIdOf = (request: IncomingMessage): string | undefined => {
  const id: unknown = Result.isSuccess(request.decoded) ? request.decoded.success.id : request.properties.userProperties?.["id"]
  if (typeof id !== "string" || id.length === 0) return undefined
  return isMqttString(id) ? id : toMqttString(id)
}

/**
 * The reply event: `causationid` = the request's id, `correlationid` = the request's
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

/**
 * An error reply for bad input: extension attributes `mdcserrorkind` and `mdcserrormessage`,
 * no data. Both usually quote the input (an id with a tab, say), so they are
 * made sendable ({@link toMqttString}): a string mosquitto refuses would drop the connection.
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
    extensions: { mdcserrorkind: toMqttString(input.kind, 100), mdcserrormessage: toMqttString(input.message) }
  })
