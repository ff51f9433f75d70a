/** Why a Valkey URL cannot be used, or `undefined` when it can. */
export const valkeyUrlProblem = (url: string): string | undefined => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return "is not a URL; expected redis://host:port or rediss://host:port"
  }
  if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") return `has protocol ${parsed.protocol}; expected redis: or rediss:`
  if (parsed.hostname.length === 0) return "has no host"
  if (parsed.pathname.length > 1 && !/^\/\d+$/.test(parsed.pathname)) return "has a path other than a database number"
  return undefined
}
