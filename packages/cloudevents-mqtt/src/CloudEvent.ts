import { randomUUID } from "node:crypto"

/**
 * A CloudEvent 1.0 as it travels in binary mode. Extension attributes are strings:
 * MQTT user properties carry nothing else, so a number would not survive the round trip anyway.
 * `correlationid` (a UUID, carried as MQTT Correlation Data) and `causationid` (the id of the
 * event that caused this one) are extension attributes like any other.
 */
export interface CloudEvent {
  readonly specversion: "1.0"
  readonly id: string
  readonly source: string
  readonly type: string
  readonly subject?: string | undefined
  /** RFC 3339. */
  readonly time?: string | undefined
  readonly datacontenttype?: string | undefined
  readonly dataschema?: string | undefined
  readonly data?: unknown
  readonly extensions: Readonly<Record<string, string>>
}

/** What a caller gives to build an event; id, time and (with data) the content type are filled in. */
export interface CloudEventInput {
  readonly source: string
  readonly type: string
  readonly id?: string | undefined
  readonly time?: string | Date | undefined
  readonly subject?: string | undefined
  readonly datacontenttype?: string | undefined
  readonly dataschema?: string | undefined
  readonly data?: unknown
  readonly extensions?: Readonly<Record<string, string>> | undefined
  readonly correlationid?: string | undefined
  readonly causationid?: string | undefined
}

export const JSON_CONTENT_TYPE = "application/json"
export const MSGPACK_CONTENT_TYPE = "application/msgpack"

/**
 * Builds an event with a new UUID as id and the current time. With data and no content type, the
 * content type is `application/json`, so the receiver never has to guess.
 */
export const makeCloudEvent = (input: CloudEventInput): CloudEvent => {
  const extensions: Record<string, string> = { ...input.extensions }
  if (input.correlationid !== undefined) extensions["correlationid"] = input.correlationid
  if (input.causationid !== undefined) extensions["causationid"] = input.causationid
  const time = input.time instanceof Date ? input.time.toISOString() : input.time ?? new Date().toISOString()
  const datacontenttype = input.datacontenttype ?? (input.data !== undefined ? JSON_CONTENT_TYPE : undefined)
  return {
    specversion: "1.0",
    id: input.id ?? randomUUID(),
    source: input.source,
    type: input.type,
    time,
    ...(input.subject !== undefined ? { subject: input.subject } : {}),
    ...(datacontenttype !== undefined ? { datacontenttype } : {}),
    ...(input.dataschema !== undefined ? { dataschema: input.dataschema } : {}),
    ...(input.data !== undefined ? { data: input.data } : {}),
    extensions
  }
}

export const correlationIdOf = (event: CloudEvent): string | undefined => event.extensions["correlationid"]
export const causationIdOf = (event: CloudEvent): string | undefined => event.extensions["causationid"]

/** The scope of a request: its subject up to the first `/`; undefined without a subject. */
export const scopeOf = (event: Pick<CloudEvent, "subject">): string | undefined =>
  event.subject === undefined ? undefined : event.subject.split("/", 1)[0]

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export const isUuid = (text: string): boolean => UUID.test(text)

/** The 16 bytes of a UUID in its canonical text form, or undefined when the text is not one. */
export const uuidToBytes = (uuid: string): Buffer | undefined =>
  isUuid(uuid) ? Buffer.from(uuid.replace(/-/g, ""), "hex") : undefined

/** The canonical lower-case text of 16 bytes, or undefined for any other length. */
export const bytesToUuid = (bytes: Uint8Array): string | undefined => {
  if (bytes.length !== 16) return undefined
  const hex = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
