/**
 * Document texts built by `JSON.stringify` in this process. The store's document check parses
 * every text it is given to refuse what is not JSON; a text this module built is JSON by
 * construction (and well-formed: `JSON.stringify` escapes lone surrogates), so the check skips
 * the parse for it. The engine's state writes are the hot case: a ~1 kB parse per step, for a
 * text it had just stringified.
 *
 * A text is remembered until its first check (a retried write parses again) and at most
 * {@link REMEMBERED} texts are kept: built but never written, they are forgotten in bulk.
 */
const REMEMBERED = 1024

const built = new Set<string>()

/** The JSON text of a value, as `JSON.stringify` makes it, marked as built here. */
export const jsonDocument = (value: object): string => {
  const text = JSON.stringify(value)
  if (built.size >= REMEMBERED) built.clear()
  built.add(text)
  return text
}

/** True once for a text {@link jsonDocument} built (and forgets it): it needs no JSON check. */
export const takeBuiltJson = (text: string): boolean => built.delete(text)

// The last text the document check parsed and its value, so a write that reads a few facts of
// the document it just checked (the job order search facts) needs no second parse.
let parsedText: string | undefined
let parsedValue: unknown

/** Keeps `value` as the parse of `text` until it is taken or another text is parsed. */
export const rememberParsed = (text: string, value: unknown): void => {
  parsedText = text
  parsedValue = value
}

/** The parse of `text` when it was the last one remembered (and forgets it), else `undefined`. */
export const takeParsed = (text: string): unknown => {
  if (parsedText !== text) return undefined
  const value = parsedValue
  parsedText = undefined
  parsedValue = undefined
  return value
}
