import { createHash } from "node:crypto"

/**
 * The dedupe hash of a CloudEvent: the first 16 bytes of SHA-256, as 32
 * lower-case hex chars, over `byteLength(source) ":" source ":" id`. The length prefix makes
 * the encoding unambiguous, so (`a:b`, `c`) and (`a`, `b:c`) never collide.
 */
export const dedupeHash = (source: string, id: string): string =>
  createHash("sha256")
    .update(`${Buffer.byteLength(source, "utf8")}:${source}:${id}`, "utf8")
    .digest("hex")
    .slice(0, 32)
