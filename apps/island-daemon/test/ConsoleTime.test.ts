import { describe, expect, it } from "vitest"
// The pages take `when` through dom.ts, which re-exports this one (dom.ts needs the DOM types).
import { formatTime, utcText, utcTitle, when } from "../console/time.js"

/** The console's times: never a bare clock time, always the date and the zone with it. */
describe("the console's times", () => {
  const instant = Date.UTC(2026, 11, 5, 13, 3, 7, 45)

  it("show the date, the time to the millisecond and the zone's offset", () => {
    expect(formatTime(instant, 60)).toBe("2026-12-05 14:03:07.045 +01:00")
    expect(formatTime(instant, -330)).toBe("2026-12-05 07:33:07.045 -05:30")
    expect(formatTime(instant, 0)).toBe("2026-12-05 13:03:07.045 +00:00")
    // Past midnight in the zone: the zone's date, not UTC's.
    expect(formatTime(instant, 11 * 60)).toBe("2026-12-06 00:03:07.045 +11:00")
  })

  it("a page shows a time of today with its date and zone too, in the browser's zone", () => {
    const now = Date.now()
    expect(when(now)).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3} [+-]\d{2}:\d{2}$/)
    expect(when(now)).toBe(formatTime(now, -new Date(now).getTimezoneOffset()))
    expect([when(null), when(undefined)]).toEqual(["", ""])
  })

  it("say the UTC instant on hover, as ISO 8601", () => {
    expect(utcText(instant)).toBe("2026-12-05T13:03:07.045Z")
    expect(utcTitle(instant)).toBe("UTC 2026-12-05T13:03:07.045Z")
  })
})
