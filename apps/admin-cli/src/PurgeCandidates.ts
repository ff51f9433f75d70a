import { Effect, Result, Stream } from "effect"
import { decodeJobOrderRecord, normalizedName } from "@microdcs/job-state"
import { ChangeStream, JobOrderRetention } from "@microdcs/store"

/** A job order `purge` may delete: retired (expiring) or cleared/cancelled (EndState). */
export interface PurgeCandidate {
  readonly id: string
  readonly version: number
  readonly state: string | null
  /** Remaining retention of a retired job order, or null when it does not expire. */
  readonly expiresInMs: number | null
  /** Time of its last change entry; null when the stream no longer holds one (older than the stream). */
  readonly lastChangeAt: number | null
}

/** Every job order document of `scope` that is retired or in EndState: a SCAN over the documents. */
export const findCandidates = (scope: string) =>
  Effect.gen(function* () {
    const retention = yield* JobOrderRetention
    const found = yield* retention.scan(scope).pipe(
      Stream.filterMap((d): Result.Result<Omit<PurgeCandidate, "lastChangeAt">, void> => {
        const decoded = decodeJobOrderRecord(d.doc)
        const state = Result.isSuccess(decoded) ? normalizedName(decoded.success.state) : null
        return d.expiresInMs !== null || state === "EndState"
          ? Result.succeed({ id: d.id, version: d.version, state, expiresInMs: d.expiresInMs })
          : Result.failVoid
      }),
      Stream.runCollect
    )
    return found.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  })

/**
 * The time of each job order's last change in the scope's stream, and the time of the oldest
 * entry. Every write appends an entry, so a job order without one changed before that oldest
 * entry: its age is at least the oldest entry's.
 */
export const lastChanges = (scope: string) =>
  Effect.gen(function* () {
    const changes = yield* ChangeStream
    const last = new Map<string, number>()
    let oldest: number | null = null
    let after = "0"
    for (;;) {
      const page = yield* changes.read(scope, { after, count: 10_000 })
      for (const e of page.entries) {
        oldest ??= e.ts
        if (e.kind === "joborder") last.set(e.id, e.ts)
      }
      if (page.next === after) return { last, oldest }
      after = page.next
    }
  })

/** Whether a candidate's last change is at least `olderThanMs` ago. */
export const oldEnough = (lastChangeAt: number | null, oldest: number | null, olderThanMs: number, now: number): boolean => {
  const changedAt = lastChangeAt ?? oldest
  // No entry left at all: the stream holds nothing newer, so the change is older than anything kept.
  return changedAt === null || now - changedAt >= olderThanMs
}
