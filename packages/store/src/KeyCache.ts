import type { KeyPartError } from "@microdcs/keyschema"

/**
 * Memoises a key builder of one part (a scope's change stream, its list): every write to a
 * scope builds the same keys, and checking and encoding the part each time is work for nothing.
 * Only built keys are kept (a refused part is built again, with its message); at `limit`
 * entries the cache starts over, so parts from outside cannot grow it without bound.
 */
export const cachedKey = (build: (part: string) => string | KeyPartError, limit = 1024): ((part: string) => string | KeyPartError) => {
  let built = new Map<string, string>()
  return (part) => {
    const hit = built.get(part)
    if (hit !== undefined) return hit
    const key = build(part)
    if (typeof key === "string") {
      if (built.size >= limit) built = new Map()
      built.set(part, key)
    }
    return key
  }
}
