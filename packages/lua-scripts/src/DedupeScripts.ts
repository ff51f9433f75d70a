import { asArray, asInteger, asOptionalText, asText, UnexpectedReply } from "./Reply.js"
import { decodeWrongType, type WrongTypeReply } from "./WrongTypeReply.js"
import { defineScript } from "./ScriptDescriptor.js"

export type DedupeClaimReply =
  | { readonly status: "claimed"; readonly alreadyHeld: boolean }
  /** `reply`: the reply kept with the done mark, null when none was kept. */
  | { readonly status: "done"; readonly reply: string | null }
  | { readonly status: "busy"; readonly remainingMs: number }
  | WrongTypeReply

export const dedupeClaim = defineScript({
  file: "dedupe-claim-1.lua",
  keys: ["dedupe"],
  encodeArgs: (a: { readonly token: string; readonly leaseMs: number }) => [a.token, a.leaseMs],
  decodeReply: (raw): DedupeClaimReply => {
    const reply = asArray("dedupe-claim", raw)
    const status = asText("dedupe-claim", reply[0])
    switch (status) {
      case "claimed":
        return { status, alreadyHeld: asInteger("dedupe-claim", reply[1]) === 0 }
      case "done":
        return { status, reply: asOptionalText("dedupe-claim", reply[1] ?? null) }
      case "busy":
        return { status, remainingMs: asInteger("dedupe-claim", reply[1]) }
      case "wrongtype":
        return decodeWrongType("dedupe-claim", reply)
      default:
        throw new UnexpectedReply("dedupe-claim", raw)
    }
  }
})

export type DedupeDoneReply =
  | { readonly status: "ok" }
  | { readonly status: "lost"; readonly stored: string | null }
  | WrongTypeReply

export const dedupeDone = defineScript({
  file: "dedupe-done-1.lua",
  keys: ["dedupe"],
  /** `reply`: text kept with the done mark (empty or absent: none). */
  encodeArgs: (a: { readonly token: string; readonly ttlMs: number; readonly reply?: string | undefined }) => [a.token, a.ttlMs, a.reply ?? ""],
  decodeReply: (raw): DedupeDoneReply => {
    const reply = asArray("dedupe-done", raw)
    const status = asText("dedupe-done", reply[0])
    switch (status) {
      case "ok":
        return { status }
      case "lost":
        return { status, stored: asOptionalText("dedupe-done", reply[1] ?? null) }
      case "wrongtype":
        return decodeWrongType("dedupe-done", reply)
      default:
        throw new UnexpectedReply("dedupe-done", raw)
    }
  }
})

export type DedupeReleaseReply = { readonly status: "ok"; readonly released: boolean } | WrongTypeReply

export const dedupeRelease = defineScript({
  file: "dedupe-release-1.lua",
  keys: ["dedupe"],
  encodeArgs: (a: { readonly token: string }) => [a.token],
  decodeReply: (raw): DedupeReleaseReply => {
    const reply = asArray("dedupe-release", raw)
    const status = asText("dedupe-release", reply[0])
    if (status === "ok") return { status, released: asInteger("dedupe-release", reply[1]) === 1 }
    if (status === "wrongtype") return decodeWrongType("dedupe-release", reply)
    throw new UnexpectedReply("dedupe-release", raw)
  }
})
