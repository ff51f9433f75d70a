import { asArray, asInteger, asOptionalText, asText, UnexpectedReply } from "./Reply.js"
import { decodeWrongType, type WrongTypeReply } from "./WrongTypeReply.js"
import { defineScript } from "./ScriptDescriptor.js"

export type DedupeClaimReply =
  | { readonly status: "claimed"; readonly alreadyHeld: boolean }
  /** `reply`: the reply kept with the done mark, null when none was kept. */
  | { readonly status: "done"; readonly reply: string | null }
  /** `token`: the holder's (null for a stored value that is no claim), for `dedupeTakeover`. */
  | { readonly status: "busy"; readonly remainingMs: number; readonly token: string | null }
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
        return { status, remainingMs: asInteger("dedupe-claim", reply[1]), token: asOptionalText("dedupe-claim", reply[2] ?? null) }
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

export type DedupeTakeoverReply =
  /** The dead holder's claim is the caller's now. */
  | { readonly status: "taken" }
  | { readonly status: "claimed"; readonly alreadyHeld: boolean }
  | { readonly status: "done"; readonly reply: string | null }
  /** The holder lives, or another token holds the claim now: look again after `remainingMs`. */
  | { readonly status: "busy"; readonly remainingMs: number }
  | WrongTypeReply

/**
 * The claim `found` (a token a busy claim reply named) taken over by `token`, if the key still
 * holds it and its holder's liveness key is gone; else what a claim would say.
 */
export const dedupeTakeover = defineScript({
  file: "dedupe-takeover-2.lua",
  keys: ["dedupe", "holder"],
  encodeArgs: (a: { readonly found: string; readonly token: string; readonly leaseMs: number }) => [a.found, a.token, a.leaseMs],
  decodeReply: (raw): DedupeTakeoverReply => {
    const name = "dedupe-takeover"
    const reply = asArray(name, raw)
    const status = asText(name, reply[0])
    switch (status) {
      case "taken":
        return { status }
      case "claimed":
        return { status, alreadyHeld: asInteger(name, reply[1]) === 0 }
      case "done":
        return { status, reply: asOptionalText(name, reply[1] ?? null) }
      case "busy":
        return { status, remainingMs: asInteger(name, reply[1]) }
      case "wrongtype":
        return decodeWrongType(name, reply)
      default:
        throw new UnexpectedReply(name, raw)
    }
  }
})

/** What the admission reads found once the claim was taken (see `dedupeClaimAdmission`). */
export type DedupeAdmissionRead =
  /**
   * `limit`: the text of the scope's acceptance limit, null when unset; `knownWorkMasters`: per
   * work master id passed, in order, whether the scope's work master list holds it.
   */
  | { readonly status: "admission"; readonly exists: boolean; readonly limit: string | null; readonly knownWorkMasters: ReadonlyArray<boolean> }
  | WrongTypeReply

export type DedupeClaimAdmissionReply =
  | { readonly status: "claimed"; readonly alreadyHeld: boolean; readonly admission: DedupeAdmissionRead }
  | Exclude<DedupeClaimReply, { readonly status: "claimed" }>

/**
 * The dedupe claim of a Store or StoreAndStart request with the admission reads of its job order
 * (and whether its work masters are listed), in one step.
 */
export const dedupeClaimAdmission = defineScript({
  file: "dedupe-claim-admission-4.lua",
  keys: ["dedupe", "jobOrder", "jobAcceptance", "workMasterList"],
  encodeArgs: (a: { readonly token: string; readonly leaseMs: number; readonly workMasters: ReadonlyArray<string> }) => [a.token, a.leaseMs, ...a.workMasters],
  decodeReply: (raw): DedupeClaimAdmissionReply => {
    const name = "dedupe-claim-admission"
    const reply = asArray(name, raw)
    const status = asText(name, reply[0])
    switch (status) {
      case "claimed": {
        const alreadyHeld = asInteger(name, reply[1]) === 0
        const read = reply.slice(2)
        const kind = asText(name, read[0])
        if (kind === "wrongtype") return { status, alreadyHeld, admission: decodeWrongType(name, read) }
        if (kind !== "admission") throw new UnexpectedReply(name, raw)
        const knownWorkMasters = read.slice(3).map((known) => asInteger(name, known) === 1)
        return { status, alreadyHeld, admission: { status: kind, exists: asInteger(name, read[1]) === 1, limit: asOptionalText(name, read[2] ?? null), knownWorkMasters } }
      }
      case "done":
        return { status, reply: asOptionalText(name, reply[1] ?? null) }
      case "busy":
        return { status, remainingMs: asInteger(name, reply[1]), token: asOptionalText(name, reply[2] ?? null) }
      case "wrongtype":
        return decodeWrongType(name, reply)
      default:
        throw new UnexpectedReply(name, raw)
    }
  }
})
