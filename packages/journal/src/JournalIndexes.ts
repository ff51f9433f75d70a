import { Effect, Result } from "effect"
import { type ConnectionError, type FamilyBatch, type Inconsistency, type IndexContext, type IndexedFamily, KeyReads, type RepairTally, type WrongType } from "@microdcs/store"
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

/** A figure's key of another type than the check reads: reported, left to an operator. */
const wrongType = (error: WrongType, scope: string): JournalFinding => ({
  fix: "none",
  problem: { kind: "wrong-type", key: error.key, scope, member: null, expected: error.expected, found: error.actual }
})

type Handle = (batch: FamilyBatch<JournalFinding>) => Effect.Effect<void, ConnectionError>

interface Counted {
  readonly key: string
  readonly scope: string
  readonly journal: string
  readonly counter: string
}

/** The keys of `family` in a SCAN batch that belong to the walk's scope, with their parts. */
const partsOf = <P extends { readonly scope: string }>(ctx: IndexContext, family: string, keys: ReadonlyArray<string>): ReadonlyArray<P & { readonly key: string }> =>
  keys.flatMap((key) => {
    const parsed = ctx.keys.parse(key)
    if (parsed?.family !== family) return []
    const parts = parsed.parts as unknown as P
    return ctx.scope !== undefined && parts.scope !== ctx.scope ? [] : [{ ...parts, key }]
  })

const totalKey = (ctx: IndexContext, c: Omit<Counted, "key">) => ctx.keys.key("counterTotal", { scope: c.scope, journal: c.journal, counter: c.counter }) as string

/** A bucket judged against its total's field: the total must be the sum of the bucket's amounts. */
const judgeBucket = (b: Counted & { readonly value: string }, bucket: KeyReads.KeyRead<Readonly<Record<string, string>>>, total: KeyReads.KeyRead<string | null>, ctx: IndexContext): ReadonlyArray<JournalFinding> => {
  if (Result.isFailure(bucket)) return [wrongType(bucket.failure, b.scope)]
  if (Result.isFailure(total)) return [wrongType(total.failure, b.scope)]
  const sum = Object.values(bucket.success).reduce((acc, amount) => acc + Number(amount), 0)
  const found = total.success === null ? 0 : Number(total.success)
  if (same(sum, found) && !(total.success === null && Object.keys(bucket.success).length > 0)) return []
  return [{
    fix: "total", scope: b.scope, journal: b.journal, counter: b.counter, value: b.value,
    problem: { kind: "wrong-score", key: totalKey(ctx, b), scope: b.scope, member: b.value, documentKey: b.key, expected: sum, found }
  }]
}

// Bucket keys (`counter:bucket:...`), one per counter and value, each judged against its total's field.
const inspectBuckets = (ctx: IndexContext, handle: Handle) =>
  KeyReads.scan(ctx.valkey, ctx.keys.pattern("counterBucket"), (keys) =>
    Effect.gen(function* () {
      const buckets = partsOf<Omit<Counted, "key"> & { readonly value: string }>(ctx, "counterBucket", keys)
      const stored = yield* KeyReads.hashes(ctx.valkey, buckets.map((b) => b.key))
      const totals = yield* KeyReads.hashFields(ctx.valkey, buckets.map((b) => ({ key: totalKey(ctx, b), field: b.value })))
      yield* handle({ scanned: buckets.length, findings: buckets.flatMap((b, i) => judgeBucket(b, stored[i]!, totals[i]!, ctx)) })
    })
  )

// Totals whose value has no bucket at all: a figure with nothing behind it.
const inspectTotals = (ctx: IndexContext, handle: Handle) =>
  KeyReads.scan(ctx.valkey, ctx.keys.pattern("counterTotal"), (keys) =>
    Effect.gen(function* () {
      const totals = partsOf<Omit<Counted, "key">>(ctx, "counterTotal", keys)
      const stored = yield* KeyReads.hashes(ctx.valkey, totals.map((t) => t.key))
      const findings: Array<JournalFinding> = []
      const values = totals.flatMap((t, i) => {
        const read = stored[i]!
        if (Result.isFailure(read)) {
          findings.push(wrongType(read.failure, t.scope))
          return []
        }
        return Object.entries(read.success).map(([value, total]) => ({ ...t, value, total: Number(total), bucket: ctx.keys.key("counterBucket", { scope: t.scope, journal: t.journal, counter: t.counter, value }) as string }))
      })
      const exists = yield* KeyReads.exist(ctx.valkey, values.map((v) => v.bucket))
      values.forEach((v, i) => {
        if (exists[i]) return
        findings.push({
          fix: "total", scope: v.scope, journal: v.journal, counter: v.counter, value: v.value,
          problem: { kind: "wrong-score", key: v.key, scope: v.scope, member: v.value, documentKey: v.bucket, expected: 0, found: v.total }
        })
      })
      yield* handle({ scanned: values.length, findings })
    })
  )

const inspectCounters = (ctx: IndexContext, handle: Handle) => Effect.andThen(inspectBuckets(ctx, handle), inspectTotals(ctx, handle))

// Each journal's entry count (`journal:count`) against the fields of its payload hash.
const inspectCounts = (ctx: IndexContext, handle: Handle) =>
  KeyReads.scan(ctx.valkey, ctx.keys.pattern("journalCount"), (keys) =>
    Effect.gen(function* () {
      const countKeys = partsOf<{ readonly scope: string }>(ctx, "journalCount", keys)
      const counts = yield* KeyReads.hashes(ctx.valkey, countKeys.map((c) => c.key))
      const findings: Array<JournalFinding> = []
      const journals = countKeys.flatMap((c, i) => {
        const read = counts[i]!
        if (Result.isFailure(read)) {
          findings.push(wrongType(read.failure, c.scope))
          return []
        }
        return Object.entries(read.success).map(([journal, n]) => ({ ...c, journal, count: Number(n), payload: ctx.keys.key("journalPayload", { scope: c.scope, journal }) as string }))
      })
      const lengths = yield* KeyReads.hashLengths(ctx.valkey, journals.map((j) => j.payload))
      journals.forEach((j, i) => {
        const length = lengths[i]!
        if (Result.isFailure(length)) return void findings.push(wrongType(length.failure, j.scope))
        if (length.success === j.count) return
        findings.push({
          fix: "count", scope: j.scope, journal: j.journal,
          problem: { kind: "wrong-score", key: j.key, scope: j.scope, member: j.journal, documentKey: j.payload, expected: length.success, found: j.count }
        })
      })
      yield* handle({ scanned: journals.length, findings })
    })
  )

// Every entry id of a search-key index against its journal's payload hash.
const inspectIndexes = (ctx: IndexContext, handle: Handle) =>
  KeyReads.scan(ctx.valkey, ctx.keys.pattern("journalIndex"), (keys) =>
    Effect.gen(function* () {
      const indexes = partsOf<{ readonly scope: string; readonly journal: string }>(ctx, "journalIndex", keys).map((index) => ({
        ...index,
        payload: ctx.keys.key("journalPayload", { scope: index.scope, journal: index.journal }) as string
      }))
      const members = yield* KeyReads.sortedSetMembers(ctx.valkey, indexes.map((index) => index.key))
      const findings: Array<JournalFinding> = []
      const pairs = indexes.flatMap((index, i) => {
        const read = members[i]!
        if (Result.isFailure(read)) {
          findings.push(wrongType(read.failure, index.scope))
          return []
        }
        return read.success.map((id) => ({ ...index, id }))
      })
      const present = yield* KeyReads.hashFieldsExist(ctx.valkey, pairs.map((p) => ({ key: p.payload, field: p.id })))
      pairs.forEach((p, i) => {
        const read = present[i]!
        if (Result.isFailure(read)) return void findings.push(wrongType(read.failure, p.scope))
        if (read.success) return
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
