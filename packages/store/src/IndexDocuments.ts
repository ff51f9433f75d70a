import { Effect, Option } from "effect"
import type { KeyFamily, KeyParts } from "@microdcs/keyschema"
import type { ConnectionError } from "./Errors.js"
import { type DocumentFamily, type Inconsistency, sameScore, startScore } from "./IndexFacts.js"
import {
  type DocumentRead,
  type Finding,
  type IndexContext,
  inScope,
  type JobOrderRead,
  type JobResponseRead,
  type WorkMasterRead
} from "./IndexFinding.js"
import { fieldsCell, type PipelinedRead, pipelined, textCell, typesOf, wrongTypeCell } from "./IndexReads.js"

/**
 * The document side of the check: reads a batch of documents, then the entries each one should
 * have (list member and score, by-state member, by-order pointer, scope registration), and
 * reports what is missing or wrong. Entries that should not be there are the member side's
 * business (IndexMembers.ts). Three round trips per batch at most, whatever its size.
 */

export interface DocumentEntry {
  readonly id: string
  readonly key: string
}

const listFamily = { jobOrder: "jobOrderList", jobResponse: "jobResponseList", workMaster: "workMasterList" } as const

const fieldsOf: Record<DocumentFamily, ReadonlyArray<string>> = {
  jobOrder: ["v", "scope", "priority"],
  jobResponse: ["v", "scope", "state", "order", "start"],
  workMaster: ["v", "scope"]
}

/** A key from stored values; `undefined` when they cannot form one (a corrupted document). */
export const keyOf = <F extends KeyFamily>(ctx: IndexContext, family: F, parts: KeyParts<F>): Effect.Effect<string | undefined> =>
  ctx.valkey.key(family, parts).pipe(Effect.option, Effect.map(Option.getOrUndefined))

/** The scopes of `scopes` among `wanted`; `undefined` when the registry itself is of another type. */
export const registeredScopes = (ctx: IndexContext, wanted: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const unique = [...new Set(wanted)]
    if (unique.length === 0) return new Set<string>()
    const [cell] = yield* pipelined(ctx.valkey, "registered scopes", [(p) => p.smismember(ctx.scopesKey, ...unique)])
    if (cell === wrongTypeCell) return undefined // reported once by the walk's scopes phase
    return new Set(unique.filter((_, i) => (cell as ReadonlyArray<number>)[i] === 1))
  })

/** Problems of one document, plus index keys that answered WRONGTYPE (their type is read afterwards). */
interface Judged<R extends DocumentRead> {
  readonly read: R
  readonly problems: Array<Inconsistency>
  readonly suspects: Array<{ readonly key: string; readonly expected: string }>
}

const judged = <R extends DocumentRead>(read: R): Judged<R> => ({ read, problems: [], suspects: [] })

/** Adds scope registration and wrong-type problems, and keeps the documents with something to repair. */
const finish = (ctx: IndexContext, all: ReadonlyArray<Judged<DocumentRead>>): Effect.Effect<Array<Finding>, ConnectionError> =>
  Effect.gen(function* () {
    const registered = yield* registeredScopes(ctx, all.map((j) => j.read.scope))
    const suspectKeys = [...new Set(all.flatMap((j) => j.suspects.map((s) => s.key)))]
    const types = new Map((yield* typesOf(ctx.valkey, suspectKeys)).map((type, i) => [suspectKeys[i]!, type] as const))
    const findings: Array<Finding> = []
    for (const { read, problems, suspects } of all) {
      if (registered !== undefined && !registered.has(read.scope)) {
        problems.push({
          kind: "scope-not-registered", key: ctx.scopesKey, scope: read.scope, member: read.scope, source: read.key, expected: "member", found: "absent"
        })
      }
      for (const { key, expected } of suspects) {
        const found = types.get(key) ?? "none"
        if (found !== "none" && found !== expected) problems.push({ kind: "wrong-type", key, scope: read.scope, member: null, expected, found })
      }
      if (problems.length > 0) findings.push({ fix: "document", read, problems })
    }
    return findings
  })

const at = (read: DocumentRead, key: string) => ({ key, scope: read.scope, member: read.id, documentKey: read.key })

/** A list member and its score: missing, or scored other than the document implies. */
const judgeListed = (j: Judged<DocumentRead>, key: string, zsetType: string, score: number | undefined, cell: unknown) => {
  const stored = textCell(cell)
  if (stored === wrongTypeCell) return j.suspects.push({ key, expected: zsetType })
  if (stored === null) {
    const expected = score === undefined ? "member" : `member with score ${score}`
    return j.problems.push({ kind: "document-missing-from-index", ...at(j.read, key), expected, found: "absent" })
  }
  if (score !== undefined && !sameScore(stored, score)) {
    j.problems.push({ kind: "wrong-score", ...at(j.read, key), expected: score, found: Number(stored) })
  }
}

/** A set member: missing from the set. */
const judgeMemberOf = (j: Judged<DocumentRead>, key: string, cell: unknown) => {
  if (cell === wrongTypeCell) j.suspects.push({ key, expected: "set" })
  else if (cell !== 1) j.problems.push({ kind: "document-missing-from-index", ...at(j.read, key), expected: "member", found: "absent" })
}

const malformed = (entry: DocumentEntry, found: string): Finding => ({
  fix: "none",
  problem: { kind: "malformed-document", key: entry.key, scope: null, member: entry.id, expected: "fields v and scope forming keys", found }
})

/** The list score a job order's `priority` field implies; `undefined` when it has none (or garbage). */
export const priorityScore = (priority: string | null): number | undefined => {
  const n = priority === null || priority === "" ? Number.NaN : Number(priority)
  return Number.isFinite(n) ? n : undefined
}

const judgeJobOrders = (ctx: IndexContext, reads: ReadonlyArray<readonly [JobOrderRead, string]>) =>
  Effect.gen(function* () {
    const listed = reads.filter(([r]) => r.persistent)
    const cells = yield* pipelined(ctx.valkey, "read joborder lists", listed.map(([r, list]) => (p) => p.zscore(list, r.id)))
    const all = listed.map(([read, list], i) => {
      const j = judged(read)
      judgeListed(j, list, "zset", priorityScore(read.priority), cells[i])
      return j
    })
    // A retired job order has nothing to be missing from; only its scope registration counts.
    return yield* finish(ctx, [...all, ...reads.filter(([r]) => !r.persistent).map(([r]) => judged(r))])
  })

const judgeWorkMasters = (ctx: IndexContext, reads: ReadonlyArray<readonly [WorkMasterRead, string]>) =>
  Effect.gen(function* () {
    const cells = yield* pipelined(ctx.valkey, "read workmaster lists", reads.map(([r, list]) => (p) => p.sismember(list, r.id)))
    return yield* finish(ctx, reads.map(([read, list], i) => {
      const j = judged(read)
      judgeMemberOf(j, list, cells[i])
      return j
    }))
  })

type ResponseDraft = Omit<JobResponseRead, "score" | "pointerId">

interface ResponseKeys {
  readonly list: string
  readonly state: string | undefined
  readonly order: string | undefined
  /** The order's `jobresponse:oforder:{o}` set; set exactly when `order` is. */
  readonly responses: string | undefined
}

const judgeJobResponses = (ctx: IndexContext, drafts: ReadonlyArray<ResponseDraft>, keys: ReadonlyArray<ResponseKeys>) =>
  Effect.gen(function* () {
    // Five reads per response in a fixed layout; a slot that does not apply holds an ECHO.
    const cells = yield* pipelined(ctx.valkey, "read jobresponse indexes", drafts.flatMap((d, i): Array<PipelinedRead> => {
      const k = keys[i]!
      return [
        (p) => p.zscore(k.list, d.id),
        (p) => (k.state ? p.sismember(k.state, d.id) : p.echo("")),
        (p) => (k.order ? p.get(k.order) : p.echo("")),
        (p) => (d.start === null ? p.hget(d.key, "doc") : p.echo("")),
        (p) => (k.responses ? p.zscore(k.responses, d.id) : p.echo(""))
      ]
    }))
    const pointers = drafts.map((_, i) => (keys[i]!.order ? textCell(cells[i * 5 + 2]) : null))
    // The responses other pointers name: do they still carry the order (a later put of theirs won)?
    const others = yield* Effect.forEach(pointers, (ptr, i) =>
      typeof ptr === "string" && ptr !== drafts[i]!.id ? keyOf(ctx, "jobResponse", { id: ptr }) : Effect.succeed(undefined)
    )
    const otherCells = yield* pipelined(ctx.valkey, "read pointed jobresponses", others.flatMap((k) => (k ? [(p) => p.hget(k, "order")] : [])))
    let o = 0
    const all = drafts.map((draft, i) => {
      const k = keys[i]!
      const docText = textCell(cells[i * 5 + 3])
      const pointer = pointers[i]!
      const read: JobResponseRead = {
        ...draft,
        score: startScore(draft.start, draft.start === null && typeof docText === "string" ? docText : null),
        pointerId: typeof pointer === "string" ? pointer : ""
      }
      const j = judged(read)
      judgeListed(j, k.list, "zset", read.score, cells[i * 5])
      if (k.state) judgeMemberOf(j, k.state, cells[i * 5 + 1])
      // Its score is a write time, which no document records: only membership is judged.
      if (k.responses) judgeListed(j, k.responses, "zset", undefined, cells[i * 5 + 4])
      if (k.order) {
        const otherOrder = others[i] ? textCell(otherCells[o++]) : undefined
        if (pointer === wrongTypeCell) j.suspects.push({ key: k.order, expected: "string" })
        else if (pointer !== read.id && (pointer === null || otherOrder !== read.orderId)) {
          j.problems.push({
            kind: "document-missing-from-index", ...at(read, k.order), expected: `pointer to ${read.id}`, found: pointer === null ? "absent" : `pointer to ${pointer}`
          })
        }
      }
      return j
    })
    return yield* finish(ctx, all)
  })

/** Document keys that answered WRONGTYPE: not documents at all, reported for an operator. */
const wrongTypedDocuments = (ctx: IndexContext, entries: ReadonlyArray<DocumentEntry>) =>
  typesOf(ctx.valkey, entries.map((e) => e.key)).pipe(
    Effect.map((types) =>
      entries.flatMap((entry, i): Array<Finding> =>
        types[i] === "hash" || types[i] === "none"
          ? []
          : [{ fix: "none", problem: { kind: "wrong-type", key: entry.key, scope: null, member: null, expected: "hash", found: types[i]! } }]
      )
    )
  )

/** A batch's documents sorted for judging, and what is reported without further reads (malformed, of another type). */
interface SortedDocuments {
  readonly findings: Array<Finding>
  readonly wrongTyped: Array<DocumentEntry>
  readonly orders: Array<readonly [JobOrderRead, string]>
  readonly masters: Array<readonly [WorkMasterRead, string]>
  readonly drafts: Array<ResponseDraft>
  readonly responseKeys: Array<ResponseKeys>
}

/**
 * A document's list key and, for a job response, its by-state, by-order and response-set keys
 * ("" when not indexed); `undefined` when a stored value forms no key.
 */
const documentIndexKeys = (ctx: IndexContext, family: DocumentFamily, scope: string, state: string | null | undefined, orderId: string | null | undefined) =>
  Effect.gen(function* () {
    const list = yield* keyOf(ctx, listFamily[family], { scope })
    const byState = family === "jobResponse" && state ? yield* keyOf(ctx, "jobResponseByState", { scope, state }) : ""
    const order = family === "jobResponse" && orderId ? yield* keyOf(ctx, "jobResponseByOrder", { orderId }) : ""
    const responses = family === "jobResponse" && orderId ? yield* keyOf(ctx, "jobResponseOfOrder", { orderId }) : ""
    if (list === undefined || byState === undefined || order === undefined || responses === undefined) return undefined
    return { list, state: byState, order, responses }
  })

/** Sorts one document into `sorted` by family, or reports why it cannot be judged; one deleted since the scan or outside the scope is skipped. */
const sortDocument = (
  ctx: IndexContext,
  family: DocumentFamily,
  sorted: SortedDocuments,
  entry: DocumentEntry,
  [version, scope, a, b, c]: ReadonlyArray<string | null>,
  ttl: unknown
) =>
  Effect.gen(function* () {
    if (version === null || version === undefined) return // deleted since the scan
    if (!scope) return void sorted.findings.push(malformed(entry, "no scope"))
    if (!inScope(ctx, scope)) return
    const base = { id: entry.id, key: entry.key, version, scope }
    const keys = yield* documentIndexKeys(ctx, family, scope, a, b)
    if (keys === undefined) return void sorted.findings.push(malformed(entry, `scope '${scope}', state '${a ?? ""}' or order '${b ?? ""}' forms no key`))
    if (family === "jobOrder") sorted.orders.push([{ ...base, family, priority: a ?? null, persistent: ttl === -1 }, keys.list])
    else if (family === "workMaster") sorted.masters.push([{ ...base, family }, keys.list])
    else {
      sorted.drafts.push({ ...base, family, state: a ?? "", orderId: b ?? "", start: c ?? null })
      sorted.responseKeys.push({ list: keys.list, state: keys.state || undefined, order: keys.order || undefined, responses: keys.responses || undefined })
    }
  })

/** Reads and judges a batch of documents of one family; documents outside the context's scope are skipped. */
export const inspectDocuments = (
  ctx: IndexContext,
  family: DocumentFamily,
  entries: ReadonlyArray<DocumentEntry>
): Effect.Effect<ReadonlyArray<Finding>, ConnectionError> =>
  Effect.gen(function* () {
    const withTtl = family === "jobOrder"
    const step = withTtl ? 2 : 1
    const cells = yield* pipelined(ctx.valkey, "read documents", entries.flatMap((e): Array<PipelinedRead> =>
      withTtl ? [(p) => p.hmget(e.key, ...fieldsOf[family]), (p) => p.pttl(e.key)] : [(p) => p.hmget(e.key, ...fieldsOf[family])]
    ))
    const sorted: SortedDocuments = { findings: [], wrongTyped: [], orders: [], masters: [], drafts: [], responseKeys: [] }
    for (const [i, entry] of entries.entries()) {
      const fields = fieldsCell(cells[i * step])
      if (fields === wrongTypeCell) sorted.wrongTyped.push(entry)
      else yield* sortDocument(ctx, family, sorted, entry, fields, withTtl ? cells[i * step + 1] : undefined)
    }
    const { findings, orders, masters, drafts } = sorted
    findings.push(...(yield* wrongTypedDocuments(ctx, sorted.wrongTyped)))
    if (orders.length > 0) findings.push(...(yield* judgeJobOrders(ctx, orders)))
    if (masters.length > 0) findings.push(...(yield* judgeWorkMasters(ctx, masters)))
    if (drafts.length > 0) findings.push(...(yield* judgeJobResponses(ctx, drafts, sorted.responseKeys)))
    return findings
  })
