/**
 * Times as the console shows them: the date, the local time to the millisecond and the zone's
 * offset, `2026-12-05 14:03:07.123 +01:00`. An operator comparing the page with a log, a
 * screenshot from another site or yesterday's events needs all three: a time alone is ambiguous.
 */

const pad = (value: number, width = 2) => String(value).padStart(width, "0")

/** `+01:00`, `-05:30`, `+00:00`: the offset from UTC in minutes east, as ISO 8601 writes it. */
const offsetText = (minutesEast: number): string => {
  const sign = minutesEast < 0 ? "-" : "+"
  const minutes = Math.abs(minutesEast)
  return `${sign}${pad(Math.floor(minutes / 60))}:${pad(minutes % 60)}`
}

/** `epochMs` in a zone `minutesEast` of UTC (default: the browser's zone at that instant). */
export const formatTime = (epochMs: number, minutesEast = -new Date(epochMs).getTimezoneOffset()): string => {
  // The wall clock of that zone, read with the UTC getters so the browser's own zone plays no part.
  const wall = new Date(epochMs + minutesEast * 60_000)
  const date = `${wall.getUTCFullYear()}-${pad(wall.getUTCMonth() + 1)}-${pad(wall.getUTCDate())}`
  const time = `${pad(wall.getUTCHours())}:${pad(wall.getUTCMinutes())}:${pad(wall.getUTCSeconds())}.${pad(wall.getUTCMilliseconds(), 3)}`
  return `${date} ${time} ${offsetText(minutesEast)}`
}

/** A time of the island's data in the browser's zone, with its date and offset; nothing for none. */
export const when = (epochMs: number | null | undefined): string => (epochMs === null || epochMs === undefined ? "" : formatTime(epochMs))

/** The instant in UTC as ISO 8601 (`2026-12-05T13:03:07.045Z`), shown on hover beside the local form. */
export const utcText = (epochMs: number): string => new Date(epochMs).toISOString()

/** The hover text of a shown time: its UTC instant (the element is made by dom.ts's `when`). */
export const utcTitle = (epochMs: number): string => `UTC ${utcText(epochMs)}`
