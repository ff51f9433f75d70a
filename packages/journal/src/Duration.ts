/** Durations in configuration: an integer and a unit, `90s`, `15m`, `1h`, `7d` (or plain milliseconds as a number). */
const units: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** Milliseconds, or undefined when `value` is no positive duration. */
export const parseDuration = (value: unknown): number | undefined => {
  if (typeof value === "number") return Number.isSafeInteger(value) && value > 0 ? value : undefined
  if (typeof value !== "string") return undefined
  const match = /^(\d{1,12})(ms|s|m|h|d)$/.exec(value.trim())
  if (!match) return undefined
  const ms = Number(match[1]) * units[match[2]!]!
  return ms > 0 && Number.isSafeInteger(ms) ? ms : undefined
}

/** The shortest text of a duration in whole units (for tables). */
export const formatDuration = (ms: number): string => {
  for (const unit of ["d", "h", "m", "s"] as const) if (ms % units[unit]! === 0) return `${ms / units[unit]!}${unit}`
  return `${ms}ms`
}
