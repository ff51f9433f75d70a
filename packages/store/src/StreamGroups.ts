/** One consumer group of a stream, as `XINFO GROUPS` describes it. */
export interface StreamGroup {
  readonly group: string
  readonly consumers: number
  readonly pending: number
  readonly lastDeliveredId: string
  /** Entries the group has not read yet; `null` when the server cannot tell (after a trim or XDEL, or before Redis 7). */
  readonly lag: number | null
}

const numberOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value))

/** Decodes an `XINFO GROUPS` reply (a list of flat field/value lists); anything else is no groups. */
export const decodeStreamGroups = (raw: unknown): ReadonlyArray<StreamGroup> =>
  (Array.isArray(raw) ? raw : []).map((entry: ReadonlyArray<unknown>) => {
    const fields = new Map<string, unknown>()
    for (let i = 0; i + 1 < entry.length; i += 2) fields.set(String(entry[i]), entry[i + 1])
    return {
      group: String(fields.get("name")),
      consumers: Number(fields.get("consumers") ?? 0),
      pending: Number(fields.get("pending") ?? 0),
      lastDeliveredId: String(fields.get("last-delivered-id") ?? "0-0"),
      lag: numberOrNull(fields.get("lag"))
    }
  })
