import { Effect } from "effect"
import { repairJobOrderSearch, type RepairJobOrderSearchReply, searchMemberId } from "@microdcs/lua-scripts"
import type { ConnectionError } from "./Errors.js"
import type { FamilyBatch, IndexedFamily } from "./IndexedFamily.js"
import type { Inconsistency } from "./IndexFacts.js"
import { type IndexContext, inScope } from "./IndexFinding.js"
import { deleteWrongTypeKey, type RepairTally } from "./IndexRepair.js"
import { pipelined, scanKeys, scanMembers, textCell } from "./IndexReads.js"

/**
 * The job order search index (`joborder:search:{scope}`) as an indexed family: walked after the
 * job orders. The document side asks the repair script, in check mode, whether each job order's
 * entries are all there and right (it derives them exactly as the write scripts do); the index
 * side hands every member it finds to the same check for the member's id, so entries of gone,
 * moved or retired job orders are found. The rebuild runs the script in repair mode.
 */
export interface SearchFinding {
  readonly scope: string
  readonly id: string
  /** The job order's document key and the scope's search key. */
  readonly doc: string
  readonly search: string
  /** Members the index side found for the id. */
  readonly extra: ReadonlyArray<string>
  readonly count: number
  /** The search key holds another type. */
  readonly wrongType?: string | undefined
}

interface Target {
  readonly scope: string
  readonly id: string
  readonly extra: ReadonlyArray<string>
}

const keysOf = (ctx: IndexContext, t: Target) => {
  const doc = ctx.keys.key("jobOrder", { id: t.id })
  const search = ctx.keys.key("jobOrderSearch", { scope: t.scope })
  return typeof doc === "string" && typeof search === "string" ? { doc, search } : undefined
}

/** Runs the check for every target in one pipeline; the findings are the targets with something wrong. */
const checkTargets = (ctx: IndexContext, targets: ReadonlyArray<Target>): Effect.Effect<ReadonlyArray<SearchFinding>, ConnectionError> =>
  Effect.gen(function* () {
    const keyed = targets.flatMap((t) => {
      const keys = keysOf(ctx, t)
      return keys === undefined ? [] : [{ t, keys }]
    })
    const results = yield* ctx.valkey.scriptMany(
      repairJobOrderSearch,
      keyed.map(({ t, keys }) => ({ keys, args: { mode: "check" as const, scope: t.scope, id: t.id, extra: t.extra } }))
    )
    const findings: Array<SearchFinding> = []
    for (const [i, result] of results.entries()) {
      if (result._tag === "Failed") return yield* Effect.fail(result.error)
      const { t, keys } = keyed[i]!
      const reply: RepairJobOrderSearchReply = result.reply
      // A document key of another type is the job order family's finding.
      if (reply.status === "wrongtype") {
        if (reply.key === keys.search) findings.push({ ...t, ...keys, count: 1, wrongType: reply.actual })
      }
      else if (reply.count > 0) findings.push({ ...t, ...keys, count: reply.count })
    }
    return findings
  })

const walkDocuments = (ctx: IndexContext, handle: (batch: FamilyBatch<SearchFinding>) => Effect.Effect<void, ConnectionError>) =>
  scanKeys(ctx.valkey, ctx.keys.pattern("jobOrder"), (keys) =>
    Effect.gen(function* () {
      const docs = keys.flatMap((key) => {
        const parsed = ctx.keys.parse(key)
        return parsed?.family === "jobOrder" ? [{ key, id: (parsed.parts as { id: string }).id }] : []
      })
      const scopes = yield* pipelined(ctx.valkey, "read joborder scopes", docs.map((d) => (p) => p.hget(d.key, "scope")))
      const targets = docs.flatMap((d, i) => {
        const scope = textCell(scopes[i])
        return typeof scope === "string" && scope !== "" && inScope(ctx, scope) ? [{ scope, id: d.id, extra: [] }] : []
      })
      yield* handle({ scanned: docs.length, findings: yield* checkTargets(ctx, targets) })
    })
  )

const walkIndexes = (ctx: IndexContext, handle: (batch: FamilyBatch<SearchFinding>) => Effect.Effect<void, ConnectionError>) =>
  scanKeys(ctx.valkey, ctx.keys.pattern("jobOrderSearch"), (keys) =>
    Effect.forEach(
      keys,
      (key) => {
        const parsed = ctx.keys.parse(key)
        const scope = parsed?.family === "jobOrderSearch" ? (parsed.parts as { scope: string }).scope : undefined
        if (scope === undefined || !inScope(ctx, scope)) return Effect.void
        return scanMembers(ctx.valkey, key, "zset", (members) => {
          const byId = new Map<string, Array<string>>()
          for (const m of members) {
            // A member of no known shape is filed under its last field, so the repair removes it as not implied.
            const id = searchMemberId(m) ?? m.split("\u0000").pop()
            if (id !== undefined && id !== "") byId.set(id, [...(byId.get(id) ?? []), m])
          }
          const targets = [...byId].map(([id, extra]) => ({ scope, id, extra }))
          return Effect.flatMap(checkTargets(ctx, targets), (findings) => handle({ scanned: members.length, findings }))
        }).pipe(
          Effect.catchTag("WrongType", (e) =>
            handle({ scanned: 1, findings: [{ scope, id: "", doc: key, search: key, extra: [], count: 1, wrongType: e.actual }] })
          )
        )
      },
      { discard: true }
    )
  )

const problemsOf = (f: SearchFinding): ReadonlyArray<Inconsistency> =>
  f.wrongType !== undefined
    ? [{ kind: "wrong-type", key: f.search, scope: f.scope, member: null, expected: "zset", found: f.wrongType }]
    : [{ kind: "document-missing-from-index", key: f.search, scope: f.scope, member: f.id, documentKey: f.doc, expected: "search entries", found: `${f.count} missing or wrong` }]

const repair = (ctx: IndexContext, f: SearchFinding, tally: RepairTally): Effect.Effect<void, ConnectionError> =>
  Effect.gen(function* () {
    if (f.wrongType !== undefined) {
      yield* deleteWrongTypeKey(ctx, f.search, "zset", tally)
      if (f.id === "") return
    }
    const reply = yield* ctx.valkey.script(repairJobOrderSearch, { doc: f.doc, search: f.search }, { mode: "repair", scope: f.scope, id: f.id, extra: f.extra })
    if (reply.status === "ok") tally.repaired += reply.count
    else tally.unrepaired.push(...problemsOf(f))
  })

export const jobOrderSearchFamily: IndexedFamily<SearchFinding> = {
  name: "joborder-search",
  inspect: (ctx, handle) =>
    Effect.gen(function* () {
      yield* walkDocuments(ctx, handle)
      yield* walkIndexes(ctx, handle)
    }),
  problemsOf,
  repair
}
