import { asText } from "./Reply.js"

/** `{"wrongtype", key, actual, expected}`: a key holds another Valkey type; nothing was written. */
export interface WrongTypeReply {
  readonly status: "wrongtype"
  readonly key: string
  readonly actual: string
  readonly expected: string
}

/** Decodes the wrongtype reply of the small lease, dedupe and reference-list scripts. */
export const decodeWrongType = (script: string, reply: ReadonlyArray<unknown>): WrongTypeReply => ({
  status: "wrongtype",
  key: asText(script, reply[1]),
  actual: asText(script, reply[2]),
  expected: asText(script, reply[3])
})
