import { asArray, asText, UnexpectedReply } from "./Reply.js"
import { defineScript } from "./ScriptDescriptor.js"
import { decodeWrongType, type WrongTypeReply } from "./WrongTypeReply.js"

export interface RedriveDeadLetterArgs {
  /** The dead-letter entry's id. */
  readonly id: string
}

export type RedriveDeadLetterReply =
  | { readonly status: "ok"; readonly newId: string }
  | { readonly status: "notfound" }
  | { readonly status: "otherstream"; readonly stream: string }
  | { readonly status: "nofields" }
  | WrongTypeReply

const decodeRedrive = (raw: unknown): RedriveDeadLetterReply => {
  const script = "redrive-deadletter"
  const reply = asArray(script, raw)
  const status = asText(script, reply[0])
  switch (status) {
    case "ok":
      return { status, newId: asText(script, reply[1]) }
    case "notfound":
    case "nofields":
      return { status }
    case "otherstream":
      return { status, stream: asText(script, reply[1]) }
    case "wrongtype":
      return decodeWrongType(script, reply)
    default:
      throw new UnexpectedReply(script, raw)
  }
}

/** Moves one dead letter back to the end of its source stream and deletes it, atomically. */
export const redriveDeadLetter = defineScript({
  file: "redrive-deadletter-2.lua",
  keys: ["deadLetter", "stream"],
  encodeArgs: (a: RedriveDeadLetterArgs) => [a.id],
  decodeReply: decodeRedrive
})
