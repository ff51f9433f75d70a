import { asArray, asInteger, asText, UnexpectedReply } from "./Reply.js"
import { defineScript } from "./ScriptDescriptor.js"
import { decodeWrongType, type WrongTypeReply } from "./WrongTypeReply.js"

/**
 * The metadata fields a dead-letter entry starts with, in order (see dead-letter-2.lua). A
 * reader takes the first `deadLetterMetaFields.length` pairs as metadata and the rest as the
 * original entry's fields.
 */
export const deadLetterMetaFields = [
  "dlq.stream",
  "dlq.group",
  "dlq.id",
  "dlq.deliveries",
  "dlq.consumer",
  "dlq.error",
  "dlq.ts"
] as const

export interface DeadLetterArgs {
  readonly group: string
  readonly id: string
  /** The consumer that must still own the entry. */
  readonly consumer: string
  readonly error: string
}

export type DeadLetterReply =
  | { readonly status: "ok"; readonly deadLetterId: string }
  | { readonly status: "notpending" }
  | { readonly status: "notowner"; readonly owner: string }
  | WrongTypeReply

const decodeDeadLetter = (raw: unknown): DeadLetterReply => {
  const script = "dead-letter"
  const reply = asArray(script, raw)
  const status = asText(script, reply[0])
  switch (status) {
    case "ok":
      return { status, deadLetterId: asText(script, reply[1]) }
    case "notpending":
      return { status }
    case "notowner":
      return { status, owner: asText(script, reply[1]) }
    case "wrongtype":
      return decodeWrongType(script, reply)
    default:
      throw new UnexpectedReply(script, raw)
  }
}

/** Moves a pending entry to its dead-letter stream and acknowledges it, atomically. */
export const deadLetterEntry = defineScript({
  file: "dead-letter-2.lua",
  keys: ["stream", "deadLetter"],
  encodeArgs: (a: DeadLetterArgs) => [a.group, a.id, a.consumer, a.error],
  decodeReply: decodeDeadLetter
})

export type TrimStreamReply =
  | { readonly status: "ok"; readonly removed: number; readonly threshold: string }
  | { readonly status: "nogroups" }
  | { readonly status: "notfound" }
  | WrongTypeReply

const decodeTrim = (raw: unknown): TrimStreamReply => {
  const script = "trim-stream"
  const reply = asArray(script, raw)
  const status = asText(script, reply[0])
  switch (status) {
    case "ok":
      return { status, removed: asInteger(script, reply[1]), threshold: asText(script, reply[2]) }
    case "nogroups":
    case "notfound":
      return { status }
    case "wrongtype":
      return decodeWrongType(script, reply)
    default:
      throw new UnexpectedReply(script, raw)
  }
}

/** Trims a stream below the oldest entry some consumer group has not acknowledged. */
export const trimStream = defineScript({
  file: "trim-stream-1.lua",
  keys: ["stream"],
  encodeArgs: (_: void) => [],
  decodeReply: decodeTrim
})
