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
