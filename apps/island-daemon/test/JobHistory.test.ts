import { describe, expect, it } from "vitest"
import type { ChangeEntry } from "@microdcs/store"
import { MAX_OPEN_RUNS, MAX_SCOPES, MINUTES, makeJobHistory, windowEnding } from "../src/JobHistory.js"
import { quantileOf, RUN_BUCKETS_MS, runBucket } from "../src/RunHistogram.js"

/** The series itself, over change entries as the stream gives them (the follower's test reads a real stream). */

const MINUTE = 60_000
const T0 = Date.UTC(2026, 11, 5, 12, 0, 0)
let seq = 0
const entry = (id: string, change: string, ts: number, kind = "joborder"): ChangeEntry => ({ streamId: `${ts}-${seq++}`, kind, id, change, version: 1, op: "put", ts })

describe("the job history series", () => {
  it("counts started, completed and aborted jobs in their minute, as rates per minute of the step", () => {
    const h = makeJobHistory()
    const now = T0 + 10 * MINUTE
    h.record("a", entry("j1", "Run", T0 + 1_000), now)
    h.record("a", entry("j2", "Run", T0 + 2_000), now)
    h.record("a", entry("j1", "Complete", T0 + MINUTE + 500), now)
    h.record("a", entry("j2", "Abort", T0 + MINUTE + 900), now)
    h.record("a", entry("j3", "Store", T0 + 3_000), now)
    h.record("a", entry("r1", "Run", T0 + 3_000, "jobresponse"), now)
    const oneMinute = h.points("a", { from: T0, to: T0 + 2 * MINUTE, stepMs: MINUTE })
    expect(oneMinute.map((p) => [p.started, p.completed, p.aborted])).toEqual([[2, 0, 0], [0, 1, 1]])
    const fiveMinutes = h.points("a", { from: T0, to: T0 + 5 * MINUTE, stepMs: 5 * MINUTE })
    expect(fiveMinutes).toHaveLength(1)
    expect(fiveMinutes[0]).toMatchObject({ at: T0, started: 2 / 5, completed: 1 / 5, aborted: 1 / 5 })
    // j1 ran 59.5 s: the 30 s to 60 s bucket, its middle for the one run.
    expect(fiveMinutes[0]!.p50).toBe(45_000)
  })

  it("gives p50/p95/p99 over any window from the run-time buckets, null without completed jobs, and sums scopes for the island", () => {
    const h = makeJobHistory()
    const now = T0 + 60 * MINUTE
    for (let i = 0; i < 100; i++) {
      const scope = i % 2 === 0 ? "a" : "b"
      const start = T0 + i * 10_000
      h.record(scope, entry(`j${i}`, "Run", start), now)
      // 95 jobs of 200 ms, 5 of 20 s.
      h.record(scope, entry(`j${i}`, "Complete", start + (i < 95 ? 200 : 20_000)), now)
    }
    const [all] = h.points(undefined, { from: T0, to: T0 + 60 * MINUTE, stepMs: 60 * MINUTE })
    expect(all!.completed * 60).toBe(100)
    expect(all!.p50).toBeGreaterThan(100)
    expect(all!.p50).toBeLessThanOrEqual(250)
    expect(all!.p95).toBeLessThanOrEqual(250)
    expect(all!.p99).toBeGreaterThan(10_000)
    expect(all!.p99).toBeLessThanOrEqual(30_000)
    const [a] = h.points("a", { from: T0, to: T0 + 60 * MINUTE, stepMs: 60 * MINUTE })
    expect(a!.completed * 60).toBe(50)
    const empty = h.points("a", { from: T0 + 60 * MINUTE, to: T0 + 61 * MINUTE, stepMs: MINUTE })
    expect(empty[0]).toEqual({ at: T0 + 60 * MINUTE, started: 0, completed: 0, aborted: 0, p50: null, p95: null, p99: null })
    expect(h.points("unknown", { from: T0, to: T0 + MINUTE, stepMs: MINUTE })[0]!.started).toBe(0)
  })

  it("estimates quantiles as histogram_quantile does", () => {
    expect(runBucket(0)).toBe(0)
    expect(runBucket(100)).toBe(0)
    expect(runBucket(101)).toBe(1)
    expect(runBucket(10 * 3_600_000)).toBe(RUN_BUCKETS_MS.length)
    const counts = new Array<number>(RUN_BUCKETS_MS.length + 1).fill(0)
    expect(quantileOf(counts, 0.5)).toBeNull()
    counts[1] = 10
    // Half way through the 100 to 250 ms bucket.
    expect(quantileOf(counts, 0.5)).toBe(175)
    counts[RUN_BUCKETS_MS.length] = 90
    expect(quantileOf(counts, 0.99)).toBe(RUN_BUCKETS_MS.at(-1))
  })

  it("keeps 24 hours: an older entry counts for nothing, a minute's slot is reused when its minute comes round", () => {
    const h = makeJobHistory()
    const now = T0 + MINUTES * MINUTE
    h.record("a", entry("old", "Run", T0 - MINUTE), now)
    h.record("a", entry("edge", "Run", T0 + 30_000), now)
    h.record("a", entry("new", "Run", now), now)
    expect(h.points("a", { from: T0 - MINUTE, to: T0 + MINUTE, stepMs: MINUTE }).map((p) => p.started)).toEqual([0, 0])
    // The slot of T0 now holds T0 + 24 h: the entry "edge" was too old when it came (24 h back from now's minute).
    expect(h.points("a", { from: now, to: now + MINUTE, stepMs: MINUTE })[0]!.started).toBe(1)
    // A late entry of an older minute does not overwrite the newer minute in its slot.
    h.record("a", entry("late", "Run", T0 + 10), now + 1)
    expect(h.points("a", { from: now, to: now + MINUTE, stepMs: MINUTE })[0]!.started).toBe(1)
  })

  it("keeps at most 64 scopes and 5 000 open runs per scope", () => {
    const h = makeJobHistory()
    for (let i = 0; i < MAX_SCOPES + 3; i++) h.record(`s${String(i).padStart(3, "0")}`, entry("j", "Run", T0), T0)
    expect(h.scopes()).toHaveLength(MAX_SCOPES)
    expect(h.scopesLeftOut()).toEqual(["s064", "s065", "s066"])
    for (let i = 0; i < MAX_OPEN_RUNS + 10; i++) h.record("s000", entry(`k${i}`, "Run", T0 + i), T0)
    expect(h.openRuns("s000")).toBe(MAX_OPEN_RUNS)
    // The oldest was forgotten: its Complete counts, without a run time.
    expect(h.record("s000", entry("k0", "Complete", T0 + MINUTE), T0)).toEqual({ event: "completed", runMs: undefined })
    expect(h.record("s000", entry("k20", "Complete", T0 + MINUTE), T0)).toEqual({ event: "completed", runMs: MINUTE - 20 })
  })

  it("aligns a window to its step, ending with the current step", () => {
    const w = windowEnding(T0 + 7 * MINUTE + 5_000, 60 * MINUTE, 5 * MINUTE)
    expect(w).toEqual({ from: T0 + 10 * MINUTE - 60 * MINUTE, to: T0 + 10 * MINUTE, stepMs: 5 * MINUTE })
  })
})
