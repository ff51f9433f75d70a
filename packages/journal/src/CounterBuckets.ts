import { decodeKeyPart, encodeKeyPartUnchecked } from "@microdcs/keyschema"
import { type CounterConfig, resolutions } from "./JournalConfig.js"

/**
 * Counter bucket arithmetic (pure). An entry adds to the bucket its reference time falls in
 * (`floor(time / resolution) * resolution`). A bucket leaves the window when its whole span is
 * older than the window: at `start + resolution + window`. So an entry counts for at least the
 * window and at most the window plus one resolution, and a day counter does not drop to zero
 * at midnight.
 */
export const bucketStart = (counter: CounterConfig, time: number): number => {
  const size = resolutions[counter.resolution]
  return Math.floor(time / size) * size
}

/** Buckets starting at or before `now - span` have left the window. */
export const spanMs = (counter: CounterConfig): number => resolutions[counter.resolution] + counter.windowMs

export const expiresAt = (counter: CounterConfig, bucket: number): number => bucket + spanMs(counter)

/** The expiry zset member of one bucket: its parts key-encoded, so `|` only ever separates them. */
export const expiryMember = (journal: string, counter: string, value: string, bucket: number): string =>
  [journal, counter, value, String(bucket)].map(encodeKeyPartUnchecked).join("|")

export const parseExpiryMember = (
  member: string
): { readonly journal: string; readonly counter: string; readonly value: string; readonly bucket: string } | undefined => {
  const parts = member.split("|")
  if (parts.length !== 4 || parts.some((p) => p.length === 0)) return undefined
  const [journal, counter, value, bucket] = parts.map(decodeKeyPart) as [string, string, string, string]
  return /^-?\d+$/.test(bucket) ? { journal, counter, value, bucket } : undefined
}
