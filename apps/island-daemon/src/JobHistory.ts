import type { ChangeEntry } from "@microdcs/store"
import type { HistoryPoint } from "./HistoryPoint.js"
import { quantileOf, RUN_BUCKETS_MS, runBucket } from "./RunHistogram.js"

/**
 * The island's job history of the last 24 hours, kept in this daemon's memory: per scope, one
 * bucket per minute with the jobs started (`Run`), completed (`Complete`) and aborted (`Abort`)
 * in it and the run times (Run to Complete) of the jobs that completed in it, as counts in fixed
 * run-time buckets, so p50/p95/p99 over any window are a sum of buckets away.
 *
 * Bounded: a ring of {@link MINUTES} buckets per scope (a bucket is reused when its minute comes
 * round again), at most {@link MAX_SCOPES} scopes (further scopes are counted in `scopesLeftOut`,
 * not kept), and at most {@link MAX_OPEN_RUNS} jobs per scope whose `Run` waits for its end (the
 * oldest is forgotten first). A scope's buckets take 1440 × (4 + 4 × 19) bytes ≈ 115 KB; all
 * 64 scopes about 7.4 MB, plus about 100 bytes per open run (at most 0.5 MB per scope).
 */

export const MINUTES = 1440
export const MAX_SCOPES = 64
export const MAX_OPEN_RUNS = 5_000
const MINUTE_MS = 60_000

/** The counters of a bucket: started, completed, aborted, then one per run-time bucket. */
const STARTED = 0
const COMPLETED = 1
const ABORTED = 2
const SLOTS = 3 + RUN_BUCKETS_MS.length + 1

/** What one change entry was, for the metrics: `undefined` for entries that are not a job's run. */
export type JobEvent = { readonly event: "started" } | { readonly event: "completed"; readonly runMs: number | undefined } | { readonly event: "aborted" }

interface ScopeSeries {
  /** The minute (epoch minutes) each ring slot holds, -1 for none. */
  readonly minute: Int32Array
  readonly counts: Uint32Array
  /** Job id → its `Run` time, in the order they started. */
  readonly openRuns: Map<string, number>
}

const newSeries = (): ScopeSeries => ({ minute: new Int32Array(MINUTES).fill(-1), counts: new Uint32Array(MINUTES * SLOTS), openRuns: new Map() })

export type { HistoryPoint } from "./HistoryPoint.js"

export interface HistoryWindow {
  /** The first minute's start (epoch ms) and the window's end (exclusive). */
  readonly from: number
  readonly to: number
  readonly stepMs: number
}

/** A window of `windowMs` ending with the current minute, in steps of `stepMs`, aligned to the step. */
export const windowEnding = (now: number, windowMs: number, stepMs: number): HistoryWindow => {
  const to = (Math.floor(now / stepMs) + 1) * stepMs
  return { from: to - windowMs, to, stepMs }
}

/** The slot of `minute` in the ring, cleared when it held an older minute; `undefined` when a newer minute holds it. */
const slotOf = (series: ScopeSeries, minute: number): number | undefined => {
  const slot = minute % MINUTES
  const held = series.minute[slot]!
  if (held > minute) return undefined
  if (held < minute) {
    series.minute[slot] = minute
    series.counts.fill(0, slot * SLOTS, (slot + 1) * SLOTS)
  }
  return slot
}

const opened = (series: ScopeSeries, id: string, ts: number) => {
  series.openRuns.delete(id)
  series.openRuns.set(id, ts)
  if (series.openRuns.size > MAX_OPEN_RUNS) series.openRuns.delete(series.openRuns.keys().next().value!)
}

/** What the entry means for the history (a job order's Run, Complete or Abort), its open runs kept up to date. */
const eventOf = (series: ScopeSeries, entry: ChangeEntry): JobEvent | undefined => {
  if (entry.kind !== "joborder") return undefined
  if (entry.change === "Run") {
    opened(series, entry.id, entry.ts)
    return { event: "started" }
  }
  if (entry.change === "Complete") {
    const since = series.openRuns.get(entry.id)
    series.openRuns.delete(entry.id)
    return { event: "completed", runMs: since === undefined ? undefined : Math.max(0, entry.ts - since) }
  }
  if (entry.change === "Abort") {
    series.openRuns.delete(entry.id)
    return { event: "aborted" }
  }
  return undefined
}

/** Counts the event in its minute's bucket (nothing for a minute 24 h or more before `now`, or one a newer minute replaced). */
const count = (series: ScopeSeries, event: JobEvent, ts: number, now: number) => {
  const minute = Math.floor(ts / MINUTE_MS)
  if (minute <= Math.floor(now / MINUTE_MS) - MINUTES) return
  const slot = slotOf(series, minute)
  if (slot === undefined) return
  const base = slot * SLOTS
  if (event.event === "started") series.counts[base + STARTED]!++
  else if (event.event === "aborted") series.counts[base + ABORTED]!++
  else {
    series.counts[base + COMPLETED]!++
    if (event.runMs !== undefined) series.counts[base + 3 + runBucket(event.runMs)]!++
  }
}

/** Adds minute `minute` of `series` into `sums` (nothing when the ring holds another minute there). */
const addMinute = (series: ScopeSeries, minute: number, sums: Float64Array) => {
  const slot = minute % MINUTES
  if (series.minute[slot] !== minute) return
  for (let i = 0; i < SLOTS; i++) sums[i]! += series.counts[slot * SLOTS + i]!
}

/** One step of a window over the chosen scopes' series. */
const pointAt = (chosen: ReadonlyArray<ScopeSeries>, at: number, stepMs: number): HistoryPoint => {
  const stepMinutes = stepMs / MINUTE_MS
  const sums = new Float64Array(SLOTS)
  const first = Math.floor(at / MINUTE_MS)
  for (const series of chosen) for (let m = first; m < first + stepMinutes; m++) addMinute(series, m, sums)
  const runs = sums.subarray(3)
  return {
    at,
    started: sums[STARTED]! / stepMinutes,
    completed: sums[COMPLETED]! / stepMinutes,
    aborted: sums[ABORTED]! / stepMinutes,
    p50: quantileOf(runs, 0.5),
    p95: quantileOf(runs, 0.95),
    p99: quantileOf(runs, 0.99)
  }
}

export const makeJobHistory = () => {
  const scopes = new Map<string, ScopeSeries>()
  const leftOut = new Set<string>()
  /** Per scope, the last change stream id read: the follower's cursor, kept with what it counted. */
  const cursors = new Map<string, string>()

  const seriesOf = (scope: string): ScopeSeries | undefined => {
    const known = scopes.get(scope)
    if (known !== undefined || scopes.size < MAX_SCOPES) return known ?? scopes.set(scope, newSeries()).get(scope)
    leftOut.add(scope)
    return undefined
  }

  return {
    /** Counts one change entry of `scope` (entries older than 24 h before `now` count for nothing) and says what it was. */
    record: (scope: string, entry: ChangeEntry, now: number): JobEvent | undefined => {
      const series = seriesOf(scope)
      const event = series === undefined ? undefined : eventOf(series, entry)
      if (series !== undefined && event !== undefined) count(series, event, entry.ts, now)
      return event
    },
    /** The points of a window for one scope, or the whole island (`undefined`). */
    points: (scope: string | undefined, window: HistoryWindow): ReadonlyArray<HistoryPoint> => {
      const chosen = scope === undefined ? [...scopes.values()] : [scopes.get(scope)].filter((s) => s !== undefined)
      const out: Array<HistoryPoint> = []
      for (let at = window.from; at < window.to; at += window.stepMs) out.push(pointAt(chosen, at, window.stepMs))
      return out
    },
    cursors,
    /** The scopes kept, sorted, and those left out by the cap. */
    scopes: () => [...scopes.keys()].sort(),
    scopesLeftOut: () => [...leftOut].sort(),
    openRuns: (scope: string) => scopes.get(scope)?.openRuns.size ?? 0
  }
}

export type JobHistory = ReturnType<typeof makeJobHistory>
