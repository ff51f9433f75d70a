import { JSON_CONTENT_TYPE } from "@microdcs/cloudevents-mqtt"
import { replyTypeOf } from "@microdcs/job-control"
import { cloudEventHeaders, extensions, type HeaderSpec } from "./Headers.js"
import type { JsonObject } from "./Json.js"
import type { RequestKind, RequestVariant } from "./Requests.js"

/**
 * The AsyncAPI Message Objects: each with its CloudEvent type, its user properties, its content
 * type, its payload schema (a reference into `components.schemas`), and in the MQTT binding its
 * Correlation Data and Response Topic.
 */

export interface MessageSpec {
  readonly title: string
  readonly summary: string
  readonly description?: string
  readonly headers: HeaderSpec
  /** The payload schema's name; none: the message carries no data (zero bytes). */
  readonly payload?: string
  /** The payload may also be left out (an event without data: zero bytes, no content type). */
  readonly dataOptional?: boolean
  /** What the MQTT Correlation Data is, when the message carries one. */
  readonly correlation?: string
  /** The MQTT Response Topic: an address, or what it is. */
  readonly responseTopic?: string | JsonObject
}

/**
 * The extension that marks a message whose data may be left out: a CloudEvent without data
 * travels as zero bytes without a content type, which a payload schema cannot say.
 */
export const DATA_OPTIONAL = "x-microdcs-data-optional"

const correlationData = (description: string): JsonObject => ({
  type: "string",
  format: "uuid",
  description: `${description} Carried as the UUID's 16 raw bytes, not its text.`
})

export const message = (name: string, spec: MessageSpec): JsonObject => ({
  name,
  title: spec.title,
  summary: spec.summary,
  ...(spec.description === undefined ? {} : { description: spec.description }),
  ...(spec.payload === undefined ? {} : { contentType: JSON_CONTENT_TYPE }),
  headers: cloudEventHeaders(spec.headers),
  ...(spec.payload === undefined ? {} : { payload: { $ref: `#/components/schemas/${spec.payload}` } }),
  ...(spec.dataOptional === true ? { [DATA_OPTIONAL]: true } : {}),
  bindings: {
    mqtt: {
      ...(spec.correlation === undefined ? {} : { correlationData: correlationData(spec.correlation) }),
      ...(spec.responseTopic === undefined ? {} : { responseTopic: spec.responseTopic }),
      bindingVersion: "0.2.0"
    }
  }
})

/** A zero-byte retained message: it deletes what the topic retained. */
export const retainedDeletion: JsonObject = {
  name: "RetainedDeletion",
  title: "Retained document deleted",
  summary: "Zero bytes, retained, no properties: the broker forgets the topic's retained document.",
  description: "Sent when the job order is retired (Clear, Cancel), deleted or expired, and for state index pages the index no longer has."
}

const methodProperty = { any: extensions.methodAny, put: extensions.methodPut, delete: extensions.methodDelete } as const

const variantDescription = (variant: RequestVariant): string | undefined =>
  variant.payload === undefined ? "Carries no data." : undefined

/** One request message (of a request kind's PUT or DELETE, or its only one). */
export const requestMessage = (kind: RequestKind, variant: RequestVariant): JsonObject => {
  const description = variantDescription(variant)
  return message(variant.key, {
    title: variant.method === "delete" ? `${kind.key} (DELETE)` : kind.key,
    summary: kind.summary,
    ...(description === undefined ? {} : { description }),
    headers: {
      type: { exactly: kind.type },
      subject: { description: "The scope (the part before the first `/`).", required: true },
      ...(variant.method === undefined ? {} : { extensions: { method: methodProperty[variant.method] }, required: variant.method === "delete" ? ["method"] : [] })
    },
    ...(variant.payload === undefined ? {} : { payload: variant.payload }),
    correlation: "Optional: when present it must be a UUID, and the reply echoes it.",
    responseTopic: { type: "string", description: "Where the reply goes (any topic not starting with `$`); without one, no reply is sent." }
  })
}

const replyExtensions = { causationid: extensions.causationid, mdcserrorkind: extensions.mdcserrorkind, mdcserrormessage: extensions.mdcserrormessage }

/** The reply to a request kind; a refusal carries `mdcserrorkind` and `mdcserrormessage` besides its ReturnStatus. */
export const replyMessage = (kind: RequestKind): JsonObject =>
  message(`${kind.key}Response`, {
    title: `${kind.key} reply`,
    summary: `The reply to ${kind.key}, on the request's Response Topic.`,
    headers: { type: { exactly: replyTypeOf(kind.type) }, subject: { description: "The request's subject.", required: false }, extensions: replyExtensions },
    payload: kind.reply,
    correlation: "The request's Correlation Data, echoed byte for byte."
  })
