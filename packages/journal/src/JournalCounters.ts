import { Effect } from "effect"
import { type ConnectionError, type InvalidInput, typedCommand, typedPipeline, type WrongType, wrongTypeError } from "@microdcs/store"
import { parseExpiryMember, spanMs } from "./CounterBuckets.js"
import type { CounterConfig, JournalConfig } from "./JournalConfig.js"
import { counterExpire, counterRepair } from "./JournalScripts.js"
import { checked, journalKey, type JournalStoreDeps } from "./JournalStoreDeps.js"

/** The counters in Valkey: their value over the window, the sweep of buckets that left it, the rebuild's repair. */

export const counterValue = (
  deps: JournalStoreDeps,
  config: JournalConfig,
  counter: CounterConfig,
  value: string,
  now: number
): Effect.Effect<number, InvalidInput | WrongType | ConnectionError> =>
  Effect.gen(function* () {
    yield* checked("value", value)
    const totalKey = journalKey(deps, "counterTotal", { scope: config.scope, journal: config.name, counter: counter.name })
    const bucketKey = journalKey(deps, "counterBucket", { scope: config.scope, journal: config.name, counter: counter.name, value })
    // One round trip of two plain reads (cheaper than a script): the stored total, minus every
    // bucket that left the window but was not swept yet, so the value is exact before the sweep.
    const [total, buckets] = yield* typedPipeline<string | null | Record<string, string>>(deps.valkey, "counter read", [totalKey, bucketKey], "hash", (p, key) =>
      key === totalKey ? p.hget(key, value) : p.hgetall(key)
    )
    const span = spanMs(counter)
    let live = typeof total === "string" ? Number(total) : 0
    for (const [start, amount] of Object.entries((buckets ?? {}) as Record<string, string>)) {
      if (Number(start) + span <= now) live -= Number(amount)
    }
    return live
  })

/** Subtracts up to `batch` buckets that left their window from their totals (one script). */
export const expireBuckets = (
  deps: JournalStoreDeps,
  scope: string,
  now: number,
  batch = 200
): Effect.Effect<{ readonly subtracted: number; readonly due: number }, InvalidInput | WrongType | ConnectionError> =>
  Effect.gen(function* () {
    yield* checked("scope", scope)
    const expiry = journalKey(deps, "counterExpiry", { scope })
    const members = yield* typedCommand(deps.valkey, "counter due buckets", expiry, "zset", (c) => c.zrangebyscore(expiry, "-inf", now, "LIMIT", 0, batch))
    if (members.length === 0) return { subtracted: 0, due: 0 }
    const buckets = members.flatMap((member) => {
      const parsed = parseExpiryMember(member)
      if (parsed === undefined) return []
      return [{
        member,
        totalKey: journalKey(deps, "counterTotal", { scope, journal: parsed.journal, counter: parsed.counter }),
        bucketKey: journalKey(deps, "counterBucket", { scope, journal: parsed.journal, counter: parsed.counter, value: parsed.value }),
        value: parsed.value,
        bucket: parsed.bucket
      }]
    })
    const reply = yield* deps.valkey.script(counterExpire, { expiry }, { now, buckets })
    return reply.status === "ok" ? { subtracted: reply.subtracted, due: members.length } : yield* wrongTypeError(reply)
  })

/** Sets a counter total to the sum of its stored buckets (the rebuild's repair). */
export const repairTotal = (deps: JournalStoreDeps, scope: string, journal: string, counter: string, value: string) =>
  Effect.gen(function* () {
    const reply = yield* deps.valkey.script(
      counterRepair,
      { total: journalKey(deps, "counterTotal", { scope, journal, counter }), buckets: journalKey(deps, "counterBucket", { scope, journal, counter, value }) },
      { value }
    )
    return reply.status === "ok" ? reply.total : yield* wrongTypeError(reply)
  })
