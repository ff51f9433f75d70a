import { createHash } from "node:crypto"

/**
 * The correlation id of a push command: a name-based UUID (RFC 9562 version 5 layout) over
 * (job id, action, visit). Deterministic, so every resend of one visit carries the same id, and
 * a UUID, so it travels as the 16 bytes of MQTT v5 correlation data. `attempt`: the attempt of a
 * Retry policy; from the second on, each has an id of its own (the first keeps the visit's id).
 */
export const correlationIdOf = (jobId: string, action: string, visit: number, attempt = 1): string => {
  const name = `${jobId.length}:${jobId}:${action.length}:${action}:${visit}`
  const hash = createHash("sha1").update(attempt === 1 ? name : `${name}:${attempt}`, "utf8").digest()
  hash[6] = (hash[6]! & 0x0f) | 0x50
  hash[8] = (hash[8]! & 0x3f) | 0x80
  const hex = hash.subarray(0, 16).toString("hex")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`
}
