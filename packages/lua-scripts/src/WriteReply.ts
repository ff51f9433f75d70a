import { asArray, asInteger, asText, UnexpectedReply } from "./Reply.js"

/**
 * The reply of every document write script: a status word, then values (see each script's
 * header for which statuses it can give).
 */
export type WriteReply =
  | { readonly status: "ok"; readonly version: number }
  | { readonly status: "notfound" }
  | { readonly status: "conflict"; readonly actual: number }
  | { readonly status: "scope"; readonly storedScope: string }
  | { readonly status: "limit"; readonly count: number; readonly limit: number }
  | { readonly status: "retry"; readonly stored: string }
  | { readonly status: "wrongtype"; readonly key: string; readonly actual: string; readonly expected: string }

export type WriteStatus = WriteReply["status"]

/**
 * A decoder for a script that can reply only with `statuses`; any other reply is a bug. The
 * reply type is narrowed to those statuses, so callers handle exactly what the script can say.
 */
export const decodeWriteReply =
  <const S extends WriteStatus>(script: string, statuses: ReadonlyArray<S>) =>
  (raw: unknown): Extract<WriteReply, { status: S }> => {
    const reply = asArray(script, raw)
    const status = asText(script, reply[0])
    if (!(statuses as ReadonlyArray<string>).includes(status)) throw new UnexpectedReply(script, raw)
    return decodeAny(script, raw, reply, status) as Extract<WriteReply, { status: S }>
  }

const decodeAny = (script: string, raw: unknown, reply: ReadonlyArray<unknown>, status: string): WriteReply => {
    switch (status) {
      case "ok":
        return { status, version: asInteger(script, reply[1]) }
      case "notfound":
        return { status }
      case "conflict":
        return { status, actual: asInteger(script, reply[1]) }
      case "scope":
        return { status, storedScope: asText(script, reply[1]) }
      case "limit":
        return { status, count: asInteger(script, reply[1]), limit: asInteger(script, reply[2]) }
      case "retry":
        return { status, stored: reply[1] === null || reply[1] === undefined ? "" : asText(script, reply[1]) }
      case "wrongtype":
        return { status, key: asText(script, reply[1]), actual: asText(script, reply[2]), expected: asText(script, reply[3]) }
      default:
        throw new UnexpectedReply(script, raw)
    }
}
