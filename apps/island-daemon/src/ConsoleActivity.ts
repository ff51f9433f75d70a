import { Effect } from "effect"
import { ChangeStream, StreamSummaries, Valkey } from "@microdcs/store"

/** How far back the island page looks, and the most change entries it reads per scope for it. */
export const ACTIVITY_WINDOW_MS = 5 * 60_000
const MAX_ENTRIES = 10_000

const percentile = (sorted: ReadonlyArray<number>, p: number): number | null =>
  sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!

/**
 * A scope's last minutes from its change stream (stream ids are server times, so the window is
 * one range read): jobs started (`Run`) and completed (`Complete`) per minute, oldest first, and
 * the run time (Run to Complete) of the jobs that did both in the window. `cut` when the window
 * held more entries than read.
 */
export const scopeActivity = (scope: string, now: number) =>
  Effect.gen(function* () {
    const changes = yield* ChangeStream
    const start = now - ACTIVITY_WINDOW_MS
    const page = yield* changes.read(scope, { after: `${start}-0`, count: MAX_ENTRIES })
    const minutes = Array.from({ length: ACTIVITY_WINDOW_MS / 60_000 }, () => ({ started: 0, completed: 0 }))
    const ran = new Map<string, number>()
    const runMs: Array<number> = []
    for (const entry of page.entries) {
      if (entry.kind !== "joborder") continue
      const minute = Math.min(minutes.length - 1, Math.max(0, Math.floor((entry.ts - start) / 60_000)))
      if (entry.change === "Run") {
        minutes[minute]!.started++
        ran.set(entry.id, entry.ts)
      } else if (entry.change === "Complete") {
        minutes[minute]!.completed++
        const since = ran.get(entry.id)
        if (since !== undefined) runMs.push(entry.ts - since)
      }
    }
    runMs.sort((a, b) => a - b)
    return { minutes, runMs: { count: runMs.length, p50: percentile(runMs, 0.5), p95: percentile(runMs, 0.95) }, cut: page.entries.length === MAX_ENTRIES }
  })

/** The consumers of each group of a scope's SFC work stream (the engine instances seen), with their pending entries and idle time. */
export const engineConsumers = (scope: string) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const key = yield* valkey.key("sfcWork", { scope })
    const streams = yield* StreamSummaries
    const summary = yield* streams.summary(key)
    return yield* Effect.forEach(summary.groups, (group) =>
      Effect.map(streams.consumers(key, group.group), (consumers) =>
        consumers.map((c) => ({ group: group.group, consumer: c.name, pending: c.pending, idleMs: c.idleMs }))
      )
    ).pipe(Effect.map((all) => all.flat()))
  })
