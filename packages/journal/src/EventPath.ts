/**
 * Paths into an event: segments separated by `.` (`data.tool_id`, `subject`, `jobid`, an array
 * position as a number: `data.results.0.ok`). Own properties only, so a path never reaches into
 * prototypes.
 */
export const pathProblem = (path: unknown): string | undefined => {
  if (typeof path !== "string" || path.length === 0) return "must be a non-empty path such as data.tool_id"
  if (path.length > 256) return "is longer than 256 characters"
  if (path.split(".").some((segment) => segment.length === 0)) return `'${path}' has an empty segment`
  return undefined
}

export const valueAt = (event: unknown, path: string): unknown => {
  let at: unknown = event
  for (const segment of path.split(".")) {
    if (Array.isArray(at)) at = /^\d+$/.test(segment) ? at[Number(segment)] : undefined
    else if (typeof at === "object" && at !== null && Object.hasOwn(at, segment)) at = (at as Record<string, unknown>)[segment]
    else return undefined
  }
  return at
}

/** A search-key value as text: strings as they are, finite numbers and booleans as their text; anything else has none. */
export const searchValueAt = (event: unknown, path: string): string | undefined => {
  const value = valueAt(event, path)
  if (typeof value === "string") return value.length > 0 ? value : undefined
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : undefined
  if (typeof value === "boolean") return String(value)
  return undefined
}

/** A number to sum: a finite number, or a text that is one. */
export const numberAt = (event: unknown, path: string): number | undefined => {
  const value = valueAt(event, path)
  const n = typeof value === "number" ? value : typeof value === "string" && value.trim() !== "" ? Number(value) : Number.NaN
  return Number.isFinite(n) ? n : undefined
}
