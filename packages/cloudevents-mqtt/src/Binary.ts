import { Result } from "effect"
import type { IPublishPacket } from "mqtt"
import { attributeProblem, CONTEXT_ATTRIBUTES, correlationProblem, isAttributeName, isRfc3339, RESERVED_NAMES } from "./Attributes.js"
import { bytesToUuid, type CloudEvent, uuidToBytes } from "./CloudEvent.js"
import { type CodecErrorKind, DecodeError, EncodeError } from "./Errors.js"
import { mqttStringProblem } from "./MqttString.js"
import { DEFAULT_MAX_NESTING_DEPTH } from "./NestingDepth.js"
import { codecFor, parsePayload, serializeData } from "./Payload.js"

/**
 * CloudEvents over MQTT 5 in binary mode: the payload is `data`, `datacontenttype`
 * is the MQTT Content Type, `correlationid` is the Correlation Data (the 16 bytes of a UUID), and
 * every other attribute is a user property of the same name.
 */

export type PublishProperties = NonNullable<IPublishPacket["properties"]>

/** Largest accepted payload by default: 256 KiB. */
export const DEFAULT_MAX_PAYLOAD_BYTES = 256 * 1024

export interface EncodeOptions {
  /** Default 256 KiB. */
  readonly maxPayloadBytes?: number | undefined
  /**
   * Raw correlation data to send instead of the `correlationid` extension. A reply echoes the
   * request's bytes verbatim, even when they were not a UUID (so an error reply still correlates).
   */
  readonly correlationData?: Uint8Array | undefined
}

export interface EncodedMessage {
  readonly payload: Buffer
  readonly properties: PublishProperties
}

const encodeError = (kind: CodecErrorKind, message: string) => Result.fail(new EncodeError({ kind, message }))
const decodeError = (kind: CodecErrorKind, message: string) => Result.fail(new DecodeError({ kind, message }))

/** The payload and MQTT properties of an event, or why it cannot be sent. Never throws. */
export const encode = (event: CloudEvent, options: EncodeOptions = {}): Result.Result<EncodedMessage, EncodeError> => {
  const attributes = attributeProblem(event)
  if (attributes) return encodeError("attributes", attributes)
  const correlationid = event.extensions["correlationid"]
  const correlation = options.correlationData === undefined ? correlationProblem(correlationid) : undefined
  if (correlation) return encodeError("correlation", correlation)

  let payload: Buffer = Buffer.alloc(0)
  if (event.data !== undefined) {
    const choice = codecFor(event.datacontenttype ?? "application/json")
    if (choice._tag === "unsupported") return encodeError("content-type", choice.reason)
    const serialized = serializeData(choice.codec, event.data)
    if (Result.isFailure(serialized)) return encodeError("payload", `data does not serialise: ${serialized.failure}`)
    payload = serialized.success
  }
  const max = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES
  if (payload.length > max) return encodeError("too-large", `payload of ${payload.length} bytes is over the limit of ${max}`)

  const userProperties: Record<string, string> = {}
  for (const name of CONTEXT_ATTRIBUTES) {
    const value = event[name]
    if (value !== undefined) userProperties[name] = value
  }
  for (const [name, value] of Object.entries(event.extensions)) {
    if (name !== "correlationid") userProperties[name] = value
  }
  const correlationData =
    options.correlationData !== undefined ? Buffer.from(options.correlationData) : correlationid !== undefined ? uuidToBytes(correlationid) : undefined
  return Result.succeed({
    payload,
    properties: {
      userProperties,
      ...(event.datacontenttype !== undefined ? { contentType: event.datacontenttype } : {}),
      ...(correlationData !== undefined ? { correlationData } : {})
    }
  })
}

export interface DecodeOptions {
  /** Default 256 KiB. */
  readonly maxPayloadBytes?: number | undefined
  /** Deepest nesting of arrays and objects (maps) in the data (default 64); deeper is a `payload` error. */
  readonly maxNestingDepth?: number | undefined
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

/**
 * The CloudEvent attributes among the user properties. Names that are not CloudEvents attribute
 * names (other MQTT metadata) are ignored; a repeated attribute is ambiguous and refused.
 */
const readAttributes = (userProperties: unknown): Result.Result<Map<string, string>, DecodeError> => {
  const attributes = new Map<string, string>()
  if (userProperties === undefined) return Result.succeed(attributes)
  if (!isRecord(userProperties)) return decodeError("attributes", "user properties are not a map")
  for (const [name, value] of Object.entries(userProperties)) {
    if (!isAttributeName(name)) continue
    if (Array.isArray(value)) return decodeError("attributes", `attribute ${name} appears ${value.length} times`)
    if (typeof value !== "string") return decodeError("attributes", `attribute ${name} is not a string`)
    // What we could not send back (as causationid, subject) is refused as it comes.
    const problem = mqttStringProblem(value)
    if (problem) return decodeError("attributes", `attribute ${name} ${problem}`)
    attributes.set(name, value)
  }
  return Result.succeed(attributes)
}

/** The correlation id from Correlation Data (authoritative) or, from other senders, a user property. */
const readCorrelation = (data: unknown, property: string | undefined): Result.Result<string | undefined, DecodeError> => {
  if (data === undefined) {
    if (property !== undefined && correlationProblem(property)) return decodeError("correlation", `correlationid is not a UUID: ${property}`)
    return Result.succeed(property?.toLowerCase())
  }
  if (!(data instanceof Uint8Array)) return decodeError("correlation", "correlation data is not bytes")
  const uuid = bytesToUuid(data)
  if (uuid === undefined) return decodeError("correlation", `correlation data has ${data.length} bytes, expected the 16 bytes of a UUID`)
  if (property !== undefined && property.toLowerCase() !== uuid) {
    return decodeError("correlation", `correlationid ${property} disagrees with the correlation data ${uuid}`)
  }
  return Result.succeed(uuid)
}

const requiredProblem = (attributes: Map<string, string>): string | undefined => {
  const specversion = attributes.get("specversion")
  if (specversion !== "1.0") return specversion === undefined ? "specversion is missing" : `specversion ${specversion} is not 1.0`
  for (const name of ["id", "source", "type"]) if (!attributes.get(name)) return `${name} is missing`
  const time = attributes.get("time")
  if (time !== undefined && !isRfc3339(time)) return `time is not RFC 3339: ${time}`
  return undefined
}

/**
 * The CloudEvent in a received message, or why it is not one. Never throws, whatever the bytes
 * and properties: every field is checked before it is used.
 */
export const decode = (
  topic: string,
  payload: Uint8Array,
  properties: IPublishPacket["properties"] | undefined,
  options: DecodeOptions = {}
): Result.Result<CloudEvent, DecodeError> => {
  if (!(payload instanceof Uint8Array)) return decodeError("payload", `payload on ${topic} is not bytes`)
  const max = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES
  if (payload.length > max) return decodeError("too-large", `payload of ${payload.length} bytes on ${topic} is over the limit of ${max}`)
  const props: Record<string, unknown> = isRecord(properties) ? properties : {}

  const attributesRead = readAttributes(props["userProperties"])
  if (Result.isFailure(attributesRead)) return Result.fail(attributesRead.failure)
  const attributes = attributesRead.success

  const contentTypeProperty = props["contentType"]
  if (contentTypeProperty !== undefined && typeof contentTypeProperty !== "string") return decodeError("content-type", "content type is not a string")
  const contentTypeProblem = contentTypeProperty === undefined ? undefined : mqttStringProblem(contentTypeProperty)
  if (contentTypeProblem) return decodeError("content-type", `content type ${contentTypeProblem}`)
  const datacontenttype = contentTypeProperty ?? attributes.get("datacontenttype")
  const choice = codecFor(datacontenttype ?? "application/json")
  if (choice._tag === "unsupported") return decodeError("content-type", `${choice.reason} on ${topic}`)

  const correlation = readCorrelation(props["correlationData"], attributes.get("correlationid"))
  if (Result.isFailure(correlation)) return Result.fail(correlation.failure)

  const problem = requiredProblem(attributes)
  if (problem) return decodeError("attributes", `${problem} on ${topic}`)

  let data: unknown = undefined
  if (payload.length > 0) {
    const parsed = parsePayload(choice.codec, payload, options.maxNestingDepth ?? DEFAULT_MAX_NESTING_DEPTH)
    if (Result.isFailure(parsed)) return decodeError("payload", `${choice.codec} payload on ${topic} does not parse: ${parsed.failure}`)
    data = parsed.success
  }

  const extensions: Record<string, string> = {}
  for (const [name, value] of attributes) if (!RESERVED_NAMES.has(name) && name !== "correlationid") extensions[name] = value
  if (correlation.success !== undefined) extensions["correlationid"] = correlation.success

  const optional = (name: string) => {
    const value = attributes.get(name)
    return value === undefined ? {} : { [name]: value }
  }
  return Result.succeed({
    specversion: "1.0",
    id: attributes.get("id") ?? "",
    source: attributes.get("source") ?? "",
    type: attributes.get("type") ?? "",
    ...optional("subject"),
    ...optional("time"),
    ...(datacontenttype !== undefined ? { datacontenttype } : {}),
    ...optional("dataschema"),
    ...(data !== undefined ? { data } : {}),
    extensions
  })
}
