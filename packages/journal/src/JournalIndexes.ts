import { Effect } from "effect"
import type { ConnectionError, FamilyBatch, Inconsistency, IndexContext, IndexedFamily, RepairTally } from "@microdcs/store"
import { journalKeyFamilies } from "./JournalKeys.js"
import { counterRepair, journalRecount, journalUnindex } from "./JournalScripts.js"

/**
 * The journal's derived figures for index maintenance (`IndexMaintenance.check` / `rebuild`,
 * and so `microdcs-admin index check|rebuild`), registered with
 * `IndexRegistry.with(journalIndexedFamily)`:
 *
 * - every counter total equals the sum of its stored buckets (after a sweep: of its live
 *   buckets), and every bucket hash has its total;
 * - every journal's entry count and bytes equal what its payload hash holds;
 * - every entry id of a search-key index has its payload (`index-entry-without-document`, the
 *   member removed by the rebuild if the payload is still missing); an index key of another type
 *   is `wrong-type`, left to an operator.
 *
 * Both are reported as `wrong-score` (the figure a key holds differs from what its data implies):
 * `key` the figure's hash, `member` the value or journal, `documentKey` the data it derives from.
 * Repairs recompute the figure from the data inside one script, so a live insert is never undone.
 */

type JournalFinding =
  | { readonly fix: "total"; readonly scope: string; readonly journal: string; readonly counter: string; readonly value: string; readonly problem: Inconsistency }
  | { readonly fix: "count"; readonly scope: string; readonly journal: string; readonly problem: Inconsistency }
  | { readonly fix: "member"; readonly indexKey: string; readonly payloadKey: string; readonly id: string; readonly problem: Inconsistency }
  | { readonly fix: "none"; readonly problem: Inconsistency }

/** Sums of float amounts may differ in the last digits with the order of additions. */
const same = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b))

const scan = (
  ctx: IndexContext,
  pattern: string,
  handle: (keys: ReadonlyArray<string>) => Effect.Effect<void, ConnectionError>
): Effect.Effect<void, ConnectionError> =>
  Effect.gen(function* () {
    let cursor = "0"
    do {
      const [next, keys] = yield* ctx.valkey.command("journal index scan", (c) => c.scan(cursor, "MATCH", pattern, "COUNT", 500))
      yield* handle(keys)
      cursor = next
    } while (cursor !== "0")
  })

/** Reads hashes in one round trip; a key of another type comes back as `null`. */
const hashes = (ctx: IndexContext, keys: ReadonlyArray<string>) =>
  ctx.valkey.command("journal index read", async (c) => {
    const pipeline = c.pipeline()
    for (const key of keys) pipeline.hgetall(key)
    const results = (await pipeline.exec()) ?? []
    return results.map(([error, value]) => (error ? null : (value as Record<string, string>)))
  })

const wrongType = (key: string, scope: string): JournalFinding => ({
  fix: "none",
  problem: { kind: "wrong-type", key, scope, member: null, expected: "hash", found: "another type" }
})

const inspectCounters = (ctx: IndexContext, handle: (batch: FamilyBatch<JournalFinding>) => Effect.Effect<void, ConnectionError>) =>
  scan(ctx, ctx.keys.pattern("counterBucket"), (keys) =>
    Effect.gen(function* () {
      // Bucket keys (`counter:bucket:...`), one per counter and value, each judged against its total's field.
      const buckets = keys.flatMap((key) => {
        const parsed = ctx.keys.parse(key)
        if (parsed?.family !== "counterBucket") return []
        const parts = parsed.parts as { readonly scope: string; readonly journal: string; readonly counter: string; readonly value: string }
        if (ctx.scope !== undefined && parts.scope !== ctx.scope) return []
        return [{ key, ...parts, total: ctx.keys.key("counterTotal", { scope: parts.scope, journal: parts.journal, counter: parts.counter }) as string }]
      })
      const bucketHashes = yield* hashes(ctx, buckets.map((b) => b.key))
      const totals = yield* ctx.valkey.command("journal index totals", async (c) => {
        const pipeline = c.pipeline()
        for (const b of buckets) pipeline.hget(b.total, b.value)
        return ((await pipeline.exec()) ?? []).map(([error, value]) => (error ? undefined : (value as string | null)))
      })
      const findings: Array<JournalFinding> = []
      buckets.forEach((b, i) => {
        const stored = bucketHashes[i]
        if (stored === null || stored === undefined) return void findings.push(wrongType(b.key, b.scope))
        const total = totals[i]
        if (total === undefined) return void findings.push(wrongType(b.total, b.scope))
        const sum = Object.values(stored).reduce((acc, amount) => acc + Number(amount), 0)
        const found = total === null ? 0 : Number(total)
        if (!same(sum, found) || (total === null && Object.keys(stored).length > 0)) {
          findings.push({
            fix: "total", scope: b.scope, journal: b.journal, counter: b.counter, value: b.value,
            problem: { kind: "wrong-score", key: b.total, scope: b.scope, member: b.value, documentKey: b.key, expected: sum, found }
          })
        }
      })
      yield* handle({ scanned: buckets.length, findings })
    })
  ).pipe(
    // Totals whose value has no bucket at all: a figure with nothing behind it.
    Effect.zipRight(
      scan(ctx, ctx.keys.pattern("counterTotal"), (keys) =>
        Effect.gen(function* () {
          const totalKeys = keys.flatMap((key) => {
            const parsed = ctx.keys.parse(key)
            if (parsed?.family !== "counterTotal") return []
            const parts = parsed.parts as { readonly scope: string; readonly journal: string; readonly counter: string }
            return ctx.scope !== undefined && parts.scope !== ctx.scope ? [] : [{ key, ...parts }]
          })
          const stored = yield* hashes(ctx, totalKeys.map((t) => t.key))
          const orphans = totalKeys.flatMap((t, i) =>
            Object.entries(stored[i] ?? {}).map(([value, total]) => ({ ...t, value, total: Number(total), bucket: ctx.keys.key("counterBucket", { scope: t.scope, journal: t.journal, counter: t.counter, value }) as string }))
          )
          const exists = yield* ctx.valkey.command("journal index buckets", async (c) => {
            const pipeline = c.pipeline()
            for (const o of orphans) pipeline.exists(o.bucket)
            return ((await pipeline.exec()) ?? []).map(([, n]) => n === 1)
          })
          const findings: Array<JournalFinding> = totalKeys.flatMap((t, i) => (stored[i] === null ? [wrongType(t.key, t.scope)] : []))
          orphans.forEach((o, i) => {
            if (exists[i]) return
            findings.push({
              fix: "total", scope: o.scope, journal: o.journal, counter: o.counter, value: o.value,
              problem: { kind: "wrong-score", key: o.key, scope: o.scope, member: o.value, documentKey: o.bucket, expected: 0, found: o.total }
            })
          })
          yield* handle({ scanned: orphans.length, findings })
        })
      )
    )
  )

const inspectCounts = (ctx: IndexContext, handle: (batch: FamilyBatch<JournalFinding>) => Effect.Effect<void, ConnectionError>) =>
  scan(ctx, ctx.keys.pattern("journalCount"), (keys) =>
    Effect.gen(function* () {
      const countKeys = keys.flatMap((key) => {
        const parsed = ctx.keys.parse(key)
        if (parsed?.family !== "journalCount") return []
        const scope = (parsed.parts as { readonly scope: string }).scope
        return ctx.scope !== undefined && scope !== ctx.scope ? [] : [{ key, scope }]
      })
      const counts = yield* hashes(ctx, countKeys.map((c) => c.key))
      const journals = countKeys.flatMap((c, i) =>
        Object.entries(counts[i] ?? {}).map(([journal, n]) => ({ ...c, journal, count: Number(n), payload: ctx.keys.key("journalPayload", { scope: c.scope, journal }) as string }))
      )
      const lengths = yield* ctx.valkey.command("journal index payloads", async (c) => {
        const pipeline = c.pipeline()
        for (const j of journals) pipeline.hlen(j.payload)
        return ((await pipeline.exec()) ?? []).map(([error, n]) => (error ? undefined : (n as number)))
      })
      const findings: Array<JournalFinding> = countKeys.flatMap((c, i) => (counts[i] === null ? [wrongType(c.key, c.scope)] : []))
      journals.forEach((j, i) => {
        const length = lengths[i]
        if (length === undefined) return void findings.push(wrongType(j.payload, j.scope))
        if (length !== j.count) {
          findings.push({
            fix: "count", scope: j.scope, journal: j.journal,
            problem: { kind: "wrong-score", key: j.key, scope: j.scope, member: j.journal, documentKey: j.payload, expected: length, found: j.count }
          })
        }
      })
      yield* handle({ scanned: journals.length, findings })
    })
  )

const inspectIndexes = (ctx: IndexContext, handle: (batch: FamilyBatch<JournalFinding>) => Effect.Effect<void, ConnectionError>) =>
  scan(ctx, ctx.keys.pattern("journalIndex"), (keys) =>
    Effect.gen(function* () {
      const indexes = keys.flatMap((key) => {
        const parsed = ctx.keys.parse(key)
        if (parsed?.family !== "journalIndex") return []
        const parts = parsed.parts as { readonly scope: string; readonly journal: string }
        if (ctx.scope !== undefined && parts.scope !== ctx.scope) return []
        return [{ key, scope: parts.scope, payload: ctx.keys.key("journalPayload", { scope: parts.scope, journal: parts.journal }) as string }]
      })
      const members = yield* ctx.valkey.command("journal index members", async (c) => {
        const pipeline = c.pipeline()
        for (const index of indexes) pipeline.zrange(index.key, 0, -1)
        return ((await pipeline.exec()) ?? []).map(([error, ids]) => (error ? null : (ids as Array<string>)))
      })
      const pairs = indexes.flatMap((index, i) => (members[i] ?? []).map((id) => ({ ...index, id })))
      const present = yield* ctx.valkey.command("journal index payloads", async (c) => {
        const pipeline = c.pipeline()
        for (const p of pairs) pipeline.hexists(p.payload, p.id)
        return ((await pipeline.exec()) ?? []).map(([error, n]) => (error ? undefined : n === 1))
      })
      const findings: Array<JournalFinding> = indexes.flatMap((index, i) =>
        members[i] === null ? [{ fix: "none", problem: { kind: "wrong-type", key: index.key, scope: index.scope, member: null, expected: "zset", found: "another type" } } as const] : []
      )
      pairs.forEach((p, i) => {
        if (present[i] === undefined) return void findings.push(wrongType(p.payload, p.scope))
        if (present[i]) return
        findings.push({
          fix: "member", indexKey: p.key, payloadKey: p.payload, id: p.id,
          problem: { kind: "index-entry-without-document", key: p.key, scope: p.scope, member: p.id, documentKey: p.payload, expected: "hash", found: "none" }
        })
      })
      yield* handle({ scanned: pairs.length, findings })
    })
  )

export const journalIndexedFamily: IndexedFamily<JournalFinding> = {
  name: "journal",
  keyFamilies: journalKeyFamilies,
  inspect: (ctx, handle) => Effect.all([inspectCounters(ctx, handle), inspectCounts(ctx, handle), inspectIndexes(ctx, handle)], { discard: true }),
  problemsOf: (finding) => [finding.problem],
  repair: (ctx, finding, tally: RepairTally) =>
    Effect.gen(function* () {
      if (finding.fix === "none") return void tally.unrepaired.push(finding.problem)
      if (finding.fix === "member") {
        const reply = yield* ctx.valkey.script(journalUnindex, { index: finding.indexKey, payload: finding.payloadKey }, { id: finding.id })
        if (reply.status === "wrongtype") return void tally.unrepaired.push(finding.problem)
        tally.removed += reply.removed
        return
      }
      const { scope, journal } = finding
      const reply =
        finding.fix === "total"
          ? yield* ctx.valkey.script(
              counterRepair,
              {
                total: ctx.keys.key("counterTotal", { scope, journal, counter: finding.counter }) as string,
                buckets: ctx.keys.key("counterBucket", { scope, journal, counter: finding.counter, value: finding.value }) as string
              },
              { value: finding.value }
            )
          : yield* ctx.valkey.script(
              journalRecount,
              {
                payload: ctx.keys.key("journalPayload", { scope, journal }) as string,
                count: ctx.keys.key("journalCount", { scope }) as string,
                bytes: ctx.keys.key("journalBytes", { scope }) as string
              },
              { journal }
            )
      if (reply.status === "wrongtype") {
        return void tally.unrepaired.push({ kind: "wrong-type", key: reply.key, scope, member: null, expected: reply.expected, found: reply.actual })
      }
      tally.repaired += 1
    })
}
