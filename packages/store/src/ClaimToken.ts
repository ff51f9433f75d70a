import { randomUUID } from "node:crypto"

// An attempt's UUID, then the holder: the holder may contain anything, the UUID never an `@`.
const HOLDER_TOKEN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}@(.+)$/s

/**
 * A fresh dedupe claim token (one per attempt) that names its holder, `{uuid}@{holder}`: a
 * waiter that finds the claim can look up the holder's liveness (`ClaimHolders`) and take the
 * claim over once the holder is dead, instead of waiting out the lease.
 */
export const claimToken = (holder: string): string => `${randomUUID()}@${holder}`

/** The holder a claim token names, or `undefined` for a token not made by {@link claimToken} (freed only by its lease's end). */
export const claimTokenHolder = (token: string): string | undefined => HOLDER_TOKEN.exec(token)?.[1]
