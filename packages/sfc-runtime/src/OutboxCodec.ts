import type { OutboxEntry } from "@microdcs/sfc"

/**
 * Outbox entries as stream fields: `type`, `jobId`, `version` (the state version that produced
 * it) and the entry as JSON in `entry`. The JSON is built by JSON.stringify, never by hand. A
 * command the writing instance sends itself names that instance's consumer in `sender`.
 */
export const encodeOutboxEntry = (entry: OutboxEntry, version: number, sender?: string): Record<string, string> => ({
  type: entry.type,
  jobId: entry.jobId,
  version: String(version),
  entry: JSON.stringify(entry),
  ...(sender !== undefined ? { sender } : {})
})

/** The entry a stream record carries, or `undefined` for a record that is no outbox entry. */
export const decodeOutboxEntry = (fields: Readonly<Record<string, string>>): OutboxEntry | undefined => {
  const text = fields["entry"]
  if (text === undefined) return undefined
  try {
    const entry = JSON.parse(text) as OutboxEntry
    return typeof entry === "object" && entry !== null && typeof entry.type === "string" ? entry : undefined
  } catch {
    return undefined
  }
}
