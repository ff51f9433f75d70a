import { deadLetterMetaFields } from "@microdcs/lua-scripts"

/**
 * The shapes ValkeyStreams returns, and the decoders from raw RESP2 stream replies. A reply that
 * does not have the documented shape is a bug (a defect), so the decoders throw on it.
 */

/** One stream entry. Writers in this project never repeat a field name; if one did, the last wins. */
export interface StreamEntry {
  readonly id: string
  readonly fields: Readonly<Record<string, string>>
}

/** The entries one read returned for one stream. */
export interface StreamBatch {
  readonly stream: string
  readonly entries: ReadonlyArray<StreamEntry>
}

/** An entry taken over from another consumer, with its delivery count after the claim. */
export interface ClaimedEntry extends StreamEntry {
  readonly deliveries: number
}

/** One XAUTOCLAIM page. `cursor` is "0-0" on the last page. */
export interface ClaimPage {
  readonly stream: string
  readonly cursor: string
  readonly entries: ReadonlyArray<ClaimedEntry>
  /** Pending ids whose entries no longer exist (trimmed or XDEL'd); the server dropped them from the PEL. */
  readonly deletedIds: ReadonlyArray<string>
}

/** One entry of a group's pending entries list. */
export interface PendingEntry {
  readonly id: string
  readonly consumer: string
  /** Milliseconds since it was last delivered. */
  readonly idleMs: number
  /** How often it was delivered (XREADGROUP, XCLAIM, XAUTOCLAIM each count one). */
  readonly deliveries: number
}

export interface PendingSummary {
  readonly count: number
  readonly smallestId: string | null
  readonly largestId: string | null
  readonly consumers: ReadonlyArray<{ readonly consumer: string; readonly count: number }>
}

/** An entry of a dead-letter stream: the original fields plus why and where it failed. */
export interface DeadLetterEntry {
  /** Id in the dead-letter stream. */
  readonly id: string
  /** The stream the entry came from, and its id there. */
  readonly stream: string
  readonly originalId: string
  readonly group: string
  readonly consumer: string
  readonly deliveries: number
  readonly error: string
  /** When it was moved, epoch ms (server time). */
  readonly movedAt: number
  readonly fields: Readonly<Record<string, string>>
}

export class MalformedStreamReply extends Error {
  constructor(what: string, raw: unknown) {
    super(`malformed ${what} reply: ${JSON.stringify(raw)}`)
  }
}

const text = (what: string, raw: unknown): string => {
  if (typeof raw === "string") return raw
  if (Buffer.isBuffer(raw)) return raw.toString("utf8")
  throw new MalformedStreamReply(what, raw)
}

const integer = (what: string, raw: unknown): number => {
  if (typeof raw === "number" && Number.isInteger(raw)) return raw
  const t = text(what, raw)
  if (!/^\d+$/.test(t)) throw new MalformedStreamReply(what, raw)
  return Number(t)
}

const list = (what: string, raw: unknown): ReadonlyArray<unknown> => {
  if (!Array.isArray(raw)) throw new MalformedStreamReply(what, raw)
  return raw
}

const fieldRecord = (what: string, flat: ReadonlyArray<unknown>, from = 0): Record<string, string> => {
  const fields: Record<string, string> = {}
  for (let i = from; i + 1 < flat.length; i += 2) fields[text(what, flat[i])] = text(what, flat[i + 1])
  return fields
}

/** `[id, [f, v, ...]]`; `[id, null]` (an entry deleted while pending) decodes to `undefined`. */
export const decodeEntry = (what: string, raw: unknown): StreamEntry | undefined => {
  if (raw === null) return undefined
  const pair = list(what, raw)
  if (pair[1] === null) return undefined
  return { id: text(what, pair[0]), fields: fieldRecord(what, list(what, pair[1])) }
}

export const decodeEntries = (what: string, raw: unknown): Array<StreamEntry> => {
  const rows = list(what, raw)
  // A plain loop: every read of the poller decodes here (flatMap allocated an array per entry).
  const entries: Array<StreamEntry> = []
  for (let i = 0; i < rows.length; i++) {
    const entry = decodeEntry(what, rows[i])
    if (entry !== undefined) entries.push(entry)
  }
  return entries
}

/** XREADGROUP: null when nothing arrived, else `[[stream, entries], ...]`. */
export const decodeReadGroup = (raw: unknown): ReadonlyArray<StreamBatch> =>
  raw === null
    ? []
    : list("XREADGROUP", raw).map((s) => {
        const pair = list("XREADGROUP", s)
        return { stream: text("XREADGROUP", pair[0]), entries: decodeEntries("XREADGROUP", pair[1]) }
      })

/** XAUTOCLAIM (Redis 7 / Valkey): `[cursor, entries, deletedIds]`. */
export const decodeAutoClaim = (
  raw: unknown
): { readonly cursor: string; readonly entries: ReadonlyArray<StreamEntry>; readonly deletedIds: ReadonlyArray<string> } => {
  const reply = list("XAUTOCLAIM", raw)
  return {
    cursor: text("XAUTOCLAIM", reply[0]),
    entries: decodeEntries("XAUTOCLAIM", reply[1]),
    // Redis 6.2 has no third element; there the deleted entries simply stay invisible.
    deletedIds: reply.length > 2 ? list("XAUTOCLAIM", reply[2]).map((id) => text("XAUTOCLAIM", id)) : []
  }
}

/** XPENDING extended form: `[[id, consumer, idleMs, deliveries], ...]`. */
export const decodePendingEntries = (raw: unknown): Array<PendingEntry> =>
  list("XPENDING", raw).map((row) => {
    const r = list("XPENDING", row)
    return {
      id: text("XPENDING", r[0]),
      consumer: text("XPENDING", r[1]),
      idleMs: integer("XPENDING", r[2]),
      deliveries: integer("XPENDING", r[3])
    }
  })

/** XPENDING summary form: `[count, smallest, largest, [[consumer, count], ...] | null]`. */
export const decodePendingSummary = (raw: unknown): PendingSummary => {
  const r = list("XPENDING", raw)
  const consumers = r[3] === null ? [] : list("XPENDING", r[3])
  return {
    count: integer("XPENDING", r[0]),
    smallestId: r[1] === null ? null : text("XPENDING", r[1]),
    largestId: r[2] === null ? null : text("XPENDING", r[2]),
    consumers: consumers.map((c) => {
      const pair = list("XPENDING", c)
      return { consumer: text("XPENDING", pair[0]), count: integer("XPENDING", pair[1]) }
    })
  }
}

/** A dead-letter entry: the metadata pairs of dead-letter-2.lua first, then the original fields. */
export const decodeDeadLetter = (raw: unknown): DeadLetterEntry => {
  const pair = list("dead letter", raw)
  const flat = list("dead letter", pair[1])
  const metaLength = deadLetterMetaFields.length * 2
  if (flat.length < metaLength) throw new MalformedStreamReply("dead letter", raw)
  const meta = fieldRecord("dead letter", flat.slice(0, metaLength))
  return {
    id: text("dead letter", pair[0]),
    stream: meta["dlq.stream"] ?? "",
    group: meta["dlq.group"] ?? "",
    originalId: meta["dlq.id"] ?? "",
    deliveries: integer("dead letter", meta["dlq.deliveries"]),
    consumer: meta["dlq.consumer"] ?? "",
    error: meta["dlq.error"] ?? "",
    movedAt: integer("dead letter", meta["dlq.ts"]),
    fields: fieldRecord("dead letter", flat, metaLength)
  }
}
