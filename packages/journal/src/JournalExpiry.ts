import { Effect } from "effect"
import { type ConnectionError, typedCommand, typedPipeline, type WrongType, wrongTypeError } from "@microdcs/store"
import type { JournalConfig } from "./JournalConfig.js"
import { type ExpireEntry, journalExpire } from "./JournalScripts.js"
import { journalKey, type JournalStoreDeps } from "./JournalStoreDeps.js"

/** The sweep of entries past their journal's retention. */

export interface ExpiredEntries {
  readonly removed: number
  readonly bytes: number
  readonly due: number
}

/** The due entries with the index keys their reverse sets name (a member that is no index key of this journal is left out). */
const dueEntries = (deps: JournalStoreDeps, config: JournalConfig, ids: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const { scope, name: journal } = config
    const entryKeys = ids.map((entryId) => journalKey(deps, "journalEntry", { scope, journal, entryId }))
    const sets = yield* typedPipeline<ReadonlyArray<string>>(deps.valkey, "journal entry sets", entryKeys, "set", (p, key) => p.smembers(key))
    const entries: Array<ExpireEntry> = ids.map((id, i) => ({
      id,
      entryKey: entryKeys[i]!,
      indexes: (sets[i] ?? []).flatMap((index) => {
        const parsed = deps.keys.parse(index)
        if (parsed?.family !== "journalIndex") return [] // not ours: the check reports it
        const parts = parsed.parts as { readonly searchKey: string; readonly value: string }
        return [{ indexKey: index, latestKey: journalKey(deps, "journalLatest", { scope, journal, searchKey: parts.searchKey }), value: parts.value }]
      })
    }))
    // A foreign member in a reverse set would make the script's re-check fail forever: keep them out of the count.
    return entries.filter((e, i) => e.indexes.length === (sets[i] ?? []).length)
  })

/**
 * Removes up to `batch` entries past the journal's retention (one script); `removed` < `batch`
 * means none is left. Safe with several sweepers: the script re-checks what was read.
 */
export const expireEntries = (
  deps: JournalStoreDeps,
  config: JournalConfig,
  now: number,
  batch = 100
): Effect.Effect<ExpiredEntries, WrongType | ConnectionError> =>
  Effect.gen(function* () {
    const { scope, name: journal } = config
    const refdate = journalKey(deps, "journalRefdate", { scope, journal })
    const cutoff = now - config.retentionMs
    for (let attempt = 1; attempt <= 5; attempt++) {
      const ids = yield* typedCommand(deps.valkey, "journal due entries", refdate, "zset", (c) => c.zrangebyscore(refdate, "-inf", cutoff, "LIMIT", 0, batch))
      if (ids.length === 0) return { removed: 0, bytes: 0, due: 0 }
      const clean = yield* dueEntries(deps, config, ids)
      if (clean.length === 0) return { removed: 0, bytes: 0, due: ids.length }
      const reply = yield* deps.valkey.script(
        journalExpire,
        {
          payload: journalKey(deps, "journalPayload", { scope, journal }),
          refdate,
          count: journalKey(deps, "journalCount", { scope }),
          bytes: journalKey(deps, "journalBytes", { scope }),
          lru: journalKey(deps, "journalLru", { scope, journal })
        },
        { journal, cutoff, entries: clean }
      )
      if (reply.status === "ok") return { removed: reply.removed, bytes: reply.bytes, due: ids.length }
      if (reply.status === "wrongtype") return yield* wrongTypeError(reply)
    }
    return { removed: 0, bytes: 0, due: 0 }
  })
