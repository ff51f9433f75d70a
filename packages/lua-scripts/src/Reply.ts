/**
 * Helpers for decoding RESP2 script replies. A script replies with a status word first, then
 * values. A missing value (Lua false) arrives as null; never parse null or "" as 0.
 */

export class UnexpectedReply extends Error {
  constructor(script: string, raw: unknown) {
    super(`unexpected reply from ${script}: ${JSON.stringify(raw)}`)
  }
}

export const asArray = (script: string, raw: unknown): ReadonlyArray<unknown> => {
  if (!Array.isArray(raw) || raw.length === 0) throw new UnexpectedReply(script, raw)
  return raw
}

export const asText = (script: string, raw: unknown): string => {
  if (typeof raw === "string") return raw
  if (Buffer.isBuffer(raw)) return raw.toString("utf8")
  throw new UnexpectedReply(script, raw)
}

/** An integer reply or a decimal string; fails on null, "" and anything that is not an integer. */
export const asInteger = (script: string, raw: unknown): number => {
  if (typeof raw === "number" && Number.isInteger(raw)) return raw
  const text = typeof raw === "string" ? raw : Buffer.isBuffer(raw) ? raw.toString("utf8") : undefined
  if (text !== undefined && /^-?\d+$/.test(text)) return Number(text)
  throw new UnexpectedReply(script, raw)
}

export const asOptionalText = (script: string, raw: unknown): string | null => (raw === null ? null : asText(script, raw))
