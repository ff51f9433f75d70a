/** Formatting and parsing of times and durations for the human output and the options. */

/** Epoch ms as an ISO time; `-` for absent or nonsensical values. */
export const isoTime = (epochMs: number | null | undefined): string =>
  epochMs === null || epochMs === undefined || !Number.isFinite(epochMs) || epochMs <= 0 ? "-" : new Date(epochMs).toISOString()

const units: ReadonlyArray<readonly [string, number]> = [
  ["d", 86_400_000],
  ["h", 3_600_000],
  ["m", 60_000],
  ["s", 1000],
  ["ms", 1]
]

/** `1d 2h`, `3m 5s`, `250ms`: the two largest non-zero units, enough to read at a glance. */
export const humanDuration = (ms: number): string => {
  if (!Number.isFinite(ms) || ms < 0) return "-"
  if (ms === 0) return "0s"
  const parts: Array<string> = []
  let rest = Math.round(ms)
  for (const [unit, size] of units) {
    const n = Math.floor(rest / size)
    if (n > 0 && parts.length < 2) parts.push(`${n}${unit}`)
    if (n > 0) rest -= n * size
    if (parts.length === 2) break
  }
  return parts.join(" ")
}

/**
 * Parses `--older-than` style durations: a sequence of number+unit, e.g. `7d`, `12h`, `1h30m`,
 * `90s`, `500ms`. `undefined` when the text is not such a duration.
 */
export const parseDuration = (text: string): number | undefined => {
  const trimmed = text.trim()
  if (!/^(\d+(\.\d+)?(ms|d|h|m|s))+$/.test(trimmed)) return undefined
  let total = 0
  for (const match of trimmed.matchAll(/(\d+(?:\.\d+)?)(ms|d|h|m|s)/g)) {
    const size = units.find(([unit]) => unit === match[2])![1]
    total += Number(match[1]) * size
  }
  return Number.isSafeInteger(Math.round(total)) ? Math.round(total) : undefined
}
