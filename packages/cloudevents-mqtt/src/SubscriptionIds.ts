/**
 * MQTT v5 subscription identifiers: how a copy of a message finds the subscription it was sent
 * for. The broker sends one copy per matching subscription (mosquitto), each carrying the
 * identifier given in its SUBSCRIBE; topic matching alone cannot tell two overlapping copies apart.
 */

/** The largest identifier MQTT 5 allows (a Variable Byte Integer, §3.8.2.1.2). */
export const MAX_SUBSCRIPTION_ID = 268_435_455

/**
 * The identifier of a filter: derived from the filter's text (FNV-1a), so a process restarted on a
 * persistent session uses the same identifier for the same filter, and the copies the broker
 * kept for it (sent before the new SUBSCRIBE) reach that filter's stream, not another one's.
 * `taken` says which identifiers live routes hold; a clash moves on to the next free one.
 */
export const subscriptionIdFor = (filter: string, taken: (id: number) => boolean): number => {
  let hash = 0x811c9dc5
  for (const byte of Buffer.from(filter, "utf8")) hash = Math.imul(hash ^ byte, 0x01000193) >>> 0
  let id = (hash % MAX_SUBSCRIPTION_ID) + 1
  while (taken(id)) id = (id % MAX_SUBSCRIPTION_ID) + 1
  return id
}

/** The subscription identifiers of a received PUBLISH: none, one, or several (one copy for several subscriptions). */
export const subscriptionIdsOf = (properties: { readonly subscriptionIdentifier?: unknown } | undefined): ReadonlyArray<number> => {
  const value = properties?.subscriptionIdentifier
  if (typeof value === "number") return [value]
  if (Array.isArray(value)) return value.filter((v): v is number => typeof v === "number")
  return []
}
