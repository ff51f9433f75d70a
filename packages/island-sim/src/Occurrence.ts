import type { Delay, Occurrence } from "./StationScript.js"

/** Whether the `ordinal`-th occurrence (from 1) is one the script names. */
export const occurs = (occurrence: Occurrence, ordinal: number): boolean => {
  switch (occurrence._tag) {
    case "always":
      return true
    case "oneIn":
      return ordinal % occurrence.n === 0
    case "nth":
      return occurrence.ordinals.includes(ordinal)
  }
}

/** A delay drawn evenly from the range, whole milliseconds. */
export const drawDelay = (delay: Delay, random: () => number = Math.random): number =>
  delay.minMs + Math.floor(random() * (delay.maxMs - delay.minMs + 1))

/**
 * A map that keeps its newest `limit` entries: what the station remembers per command or job
 * (answers given, emissions counted) stays bounded however long it runs.
 */
export const rememberBounded = <K, V>(map: Map<K, V>, key: K, value: V, limit: number): V => {
  map.delete(key)
  map.set(key, value)
  if (map.size > limit) {
    const oldest = map.keys().next()
    if (oldest.done !== true) map.delete(oldest.value)
  }
  return value
}
