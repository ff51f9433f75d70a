import { Effect } from "effect"
import { type ConnectionError, WrongType } from "./Errors.js"
import {
  type IndexEntryWithoutDocument,
  type IndexFamily,
  indexFamilies,
  judgeMember,
  type MemberRule,
  type Membership,
  membershipOf,
  type StaleMember
} from "./IndexFacts.js"
import { keyOf } from "./IndexDocuments.js"
import { type Finding, type IndexContext, inScope } from "./IndexFinding.js"
import { fieldsCell, type PipelinedRead, pipelined, scanMembers, textCell, typesOf, wrongTypeCell } from "./IndexReads.js"

/**
 * The member side of the check: walks every index key and asks, for each entry, whether the
 * document it names exists and belongs there. What a document lacks is the document side's
 * business (IndexDocuments.ts).
 */

export interface IndexKeyEntry {
  readonly family: IndexFamily
  readonly key: string
  readonly parts: Readonly<Record<string, string>>
}

/** Reports findings and how many entries they cover; the rebuild repairs them at once. */
export type OnFindings<E, R> = (scanned: number, findings: ReadonlyArray<Finding>) => Effect.Effect<void, E, R>

/** The actual type of keys whose reads answered WRONGTYPE (rare: one more round trip then). */
const actualTypes = (ctx: IndexContext, keys: ReadonlyArray<string | undefined>, cells: ReadonlyArray<unknown>) =>
  Effect.gen(function* () {
    const wrong = keys.flatMap((key, i) => (key !== undefined && cells[i] === wrongTypeCell ? [key] : []))
    const types = yield* typesOf(ctx.valkey, wrong)
    return new Map(wrong.map((key, i) => [key, types[i]!] as const))
  })

/**
 * Judges one page of members of a set or sorted-set index, whatever its family: `documentKeyOf`
 * names the document of an id (`undefined` when the id forms no key, so names no document).
 */
export const judgeMembers = (
  ctx: IndexContext,
  index: MemberRule,
  ids: ReadonlyArray<string>,
  documentKeyOf: (id: string) => Effect.Effect<string | undefined>
): Effect.Effect<Array<IndexEntryWithoutDocument | StaleMember>, ConnectionError> =>
  Effect.gen(function* () {
    const keys = yield* Effect.forEach(ids, documentKeyOf)
    const fields = ["v", ...index.belongsWhen.map(([field]) => field)]
    const step = index.persistentOnly ? 2 : 1
    const cells = yield* pipelined(ctx.valkey, "read indexed documents", keys.flatMap((key): Array<PipelinedRead> => {
      if (key === undefined) return index.persistentOnly ? [(p) => p.echo(""), (p) => p.echo("")] : [(p) => p.echo("")]
      const read: PipelinedRead = (p) => p.hmget(key, ...fields)
      return index.persistentOnly ? [read, (p) => p.pttl(key)] : [read]
    }))
    const hashCells = keys.map((_, i) => cells[i * step])
    const types = yield* actualTypes(ctx, keys, hashCells)
    const problems: Array<IndexEntryWithoutDocument | StaleMember> = []
    ids.forEach((id, i) => {
      const key = keys[i]
      const values = fieldsCell(hashCells[i])
      const type = key === undefined ? "none" : values === wrongTypeCell ? types.get(key) ?? "none" : values[0] == null ? "none" : "hash"
      const stored = values === wrongTypeCell || key === undefined ? [] : values
      const problem = judgeMember(index, id, key ?? "", {
        type,
        fields: Object.fromEntries(fields.map((field, f) => [field, stored[f] ?? null])),
        persistent: !index.persistentOnly || cells[i * step + 1] === -1
      })
      if (problem?.kind === "index-entry-without-document" || problem?.kind === "stale-member") problems.push(problem)
    })
    return problems
  })

/** Judges one page of members of a core set or sorted-set index. */
export const inspectMembers = (ctx: IndexContext, index: Membership, ids: ReadonlyArray<string>) =>
  judgeMembers(ctx, index, ids, (id) => keyOf(ctx, index.document, { id })).pipe(
    Effect.map((problems) => problems.map((problem): Finding => ({ fix: "member", index, problem })))
  )

/** Judges by-order pointers: each must name a response that carries its job order. */
export const inspectPointers = (ctx: IndexContext, pointers: ReadonlyArray<{ readonly key: string; readonly orderId: string }>) =>
  Effect.gen(function* () {
    const values = yield* pipelined(ctx.valkey, "read order pointers", pointers.map(({ key }) => (p) => p.get(key)))
    const named = values.map(textCell)
    const keys = yield* Effect.forEach(named, (id) => (typeof id === "string" ? keyOf(ctx, "jobResponse", { id }) : Effect.succeed(undefined)))
    const cells = yield* pipelined(ctx.valkey, "read pointed documents", keys.map((key) => (p) =>
      key === undefined ? p.echo("") : p.hmget(key, "v", "scope", "order")
    ))
    const types = yield* actualTypes(ctx, keys, cells)
    const pointerTypes = yield* actualTypes(ctx, pointers.map((p) => p.key), values)
    const findings: Array<Finding> = []
    pointers.forEach(({ key, orderId }, i) => {
      const pointerId = named[i]!
      if (pointerId === wrongTypeCell) {
        const problem = { kind: "wrong-type", key, scope: null, member: null, expected: "string", found: pointerTypes.get(key) ?? "none" } as const
        return findings.push({ fix: "type", problem })
      }
      if (pointerId === null) return // deleted since the scan
      const documentKey = keys[i] ?? ""
      const fields = fieldsCell(cells[i])
      if (fields === wrongTypeCell || fields[0] == null || keys[i] === undefined) {
        // Which scope a pointer to nothing belongs to cannot be told: a scoped walk leaves it alone.
        if (!inScope(ctx, null)) return
        const found = fields === wrongTypeCell ? types.get(documentKey) ?? "none" : "none"
        const problem = { kind: "index-entry-without-document", key, scope: null, member: pointerId, documentKey, expected: "hash", found } as const
        return findings.push({ fix: "pointer", orderId, pointerId, problem })
      }
      const [, scope, order] = fields
      if (order === orderId || !inScope(ctx, scope ?? null)) return
      const problem = { kind: "stale-pointer", key, scope: scope ?? null, member: pointerId, documentKey, expected: orderId, found: order ?? "" } as const
      findings.push({ fix: "pointer", orderId, pointerId, problem })
    })
    return findings
  })

const wrongType = (entry: IndexKeyEntry, found: string): Finding => ({
  fix: "type",
  problem: { kind: "wrong-type", key: entry.key, scope: entry.parts["scope"] ?? null, member: null, expected: indexFamilies[entry.family].type, found }
})

/**
 * Inspects a batch of index keys: their types, every pointer, then each set and sorted set page
 * by page (SSCAN/ZSCAN), so a large index never sits in memory whole.
 */
export const inspectIndexKeys = <E, R>(
  ctx: IndexContext,
  entries: ReadonlyArray<IndexKeyEntry>,
  onFindings: OnFindings<E, R>
): Effect.Effect<void, E | ConnectionError, R> =>
  Effect.gen(function* () {
    // A by-order response set belongs to no scope; only an unscoped walk can judge its members.
    const wanted = entries.filter((e) =>
      e.family === "jobResponseByOrder" ? true : e.family === "jobResponseOfOrder" ? ctx.scope === undefined : inScope(ctx, e.parts["scope"] ?? null)
    )
    const types = yield* typesOf(ctx.valkey, wanted.map((e) => e.key))
    const rightType = wanted.filter((e, i) => types[i] === indexFamilies[e.family].type)
    const badTypes = wanted.flatMap((e, i) => (types[i] !== "none" && types[i] !== indexFamilies[e.family].type ? [wrongType(e, types[i]!)] : []))
    const pointers = rightType.filter((e) => e.family === "jobResponseByOrder")
    const pointerFindings = yield* inspectPointers(ctx, pointers.map((e) => ({ key: e.key, orderId: e.parts["orderId"] ?? "" })))
    yield* onFindings(badTypes.length + pointers.length, [...badTypes, ...pointerFindings])
    for (const entry of rightType) {
      if (entry.family === "jobResponseByOrder") continue
      const index = membershipOf(entry.family, entry.key, entry.parts)
      yield* scanMembers(ctx.valkey, entry.key, index.indexType, (ids) =>
        inspectMembers(ctx, index, ids).pipe(Effect.flatMap((findings) => onFindings(ids.length, findings)))
      ).pipe(
        // The key changed type between TYPE and the scan: report it like any other wrong type.
        Effect.catchIf(
          (e): e is WrongType => e instanceof WrongType,
          (e) => onFindings(0, [wrongType(entry, e.actual)])
        )
      )
    }
  })
