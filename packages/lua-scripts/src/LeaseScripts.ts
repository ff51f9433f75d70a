import { decodeWrongType, type WrongTypeReply } from "./WrongTypeReply.js"
import { asArray, asInteger, asOptionalText, asText, UnexpectedReply } from "./Reply.js"
import { defineScript } from "./ScriptDescriptor.js"

/**
 * Lease scripts, generic over the lease key (lock:poststart:{configId}, lock:publisher): the
 * value is the holder id, the TTL is the lease.
 */

export interface LeaseArgs {
  readonly holder: string
  readonly ttlMs: number
}

export type LeaseAcquireReply =
  | { readonly status: "acquired" }
  | { readonly status: "held"; readonly holder: string; readonly remainingMs: number }
  | WrongTypeReply

export const leaseAcquire = defineScript({
  file: "lease-acquire-1.lua",
  keys: ["lease"],
  encodeArgs: (a: LeaseArgs) => [a.holder, a.ttlMs],
  decodeReply: (raw): LeaseAcquireReply => {
    const reply = asArray("lease-acquire", raw)
    const status = asText("lease-acquire", reply[0])
    switch (status) {
      case "acquired":
        return { status }
      case "held":
        return { status, holder: asText("lease-acquire", reply[1]), remainingMs: asInteger("lease-acquire", reply[2]) }
      case "wrongtype":
        return decodeWrongType("lease-acquire", reply)
      default:
        throw new UnexpectedReply("lease-acquire", raw)
    }
  }
})

export type LeaseRenewReply =
  | { readonly status: "renewed" }
  | { readonly status: "lost"; readonly stored: string | null }
  | WrongTypeReply

export const leaseRenew = defineScript({
  file: "lease-renew-1.lua",
  keys: ["lease"],
  encodeArgs: (a: LeaseArgs) => [a.holder, a.ttlMs],
  decodeReply: (raw): LeaseRenewReply => {
    const reply = asArray("lease-renew", raw)
    const status = asText("lease-renew", reply[0])
    switch (status) {
      case "renewed":
        return { status }
      case "lost":
        return { status, stored: asOptionalText("lease-renew", reply[1] ?? null) }
      case "wrongtype":
        return decodeWrongType("lease-renew", reply)
      default:
        throw new UnexpectedReply("lease-renew", raw)
    }
  }
})

export type LeaseReleaseReply =
  | { readonly status: "released" }
  | { readonly status: "notheld"; readonly stored: string | null }
  | WrongTypeReply

export const leaseRelease = defineScript({
  file: "lease-release-1.lua",
  keys: ["lease"],
  encodeArgs: (a: { readonly holder: string }) => [a.holder],
  decodeReply: (raw): LeaseReleaseReply => {
    const reply = asArray("lease-release", raw)
    const status = asText("lease-release", reply[0])
    switch (status) {
      case "released":
        return { status }
      case "notheld":
        return { status, stored: asOptionalText("lease-release", reply[1] ?? null) }
      case "wrongtype":
        return decodeWrongType("lease-release", reply)
      default:
        throw new UnexpectedReply("lease-release", raw)
    }
  }
})
