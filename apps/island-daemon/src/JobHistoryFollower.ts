import { Duration, Effect, Schedule } from "effect"
import { type ChangeEntry, ChangeStream, ScopeRegistry } from "@microdcs/store"
import type { JobEvent, JobHistory } from "./JobHistory.js"

/** How often the follower looks for new change entries, and the most it reads at once. */
export const HISTORY_TICK_MS = 1_000
const PAGE = 1_000

/** Told of every job event the follower counts (the metrics take those after the daemon started). */
export type OnJobEvent = (scope: string, entry: ChangeEntry, event: JobEvent) => void

/**
 * Reads every scope's change entries after the history's cursor into the history, page by page,
 * until it is caught up. The first read of a scope starts at the stream's oldest entry (the
 * backfill: the stream keeps about the last 5 000 entries of a scope). A page is counted and its
 * cursor moved with no wait in between, so an interrupted follower and the one that takes over
 * from the same history neither miss an entry nor count one twice.
 */
export const catchUp = (history: JobHistory, onEvent: OnJobEvent = () => {}) =>
  Effect.gen(function* () {
    const changes = yield* ChangeStream
    const registry = yield* ScopeRegistry
    for (const scope of [...(yield* registry.list)].sort()) {
      if (history.scopesLeftOut().includes(scope)) continue
      for (;;) {
        const page = yield* changes.read(scope, { after: history.cursors.get(scope) ?? "0", count: PAGE })
        const now = Date.now()
        for (const entry of page.entries) {
          const event = history.record(scope, entry, now)
          if (event !== undefined) onEvent(scope, entry, event)
        }
        history.cursors.set(scope, page.next)
        if (page.entries.length < PAGE) break
      }
    }
  })

/**
 * Follows the change streams into the history for as long as it runs (forked in the island's
 * scope). A failed read (the store away) is logged and tried again at the next tick.
 */
export const followHistory = (history: JobHistory, onEvent?: OnJobEvent) =>
  catchUp(history, onEvent).pipe(
    Effect.catch((error) => Effect.logWarning("job history: reading the change streams failed; trying again").pipe(Effect.annotateLogs({ error: String(error) }))),
    Effect.repeat(Schedule.spaced(Duration.millis(HISTORY_TICK_MS)))
  )
