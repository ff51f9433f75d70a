import { Effect } from "effect"
import type { FamilyTemplates } from "@microdcs/keyschema"
import { type ConnectionError, WrongType } from "./Errors.js"
import type { FamilyBatch } from "./IndexedFamily.js"
import type { DocumentIndexSpec, EntryToRepair, IndexedDocument } from "./IndexDocumentSpec.js"
import { registeredScopes } from "./IndexDocuments.js"
import { type IndexEntryWithoutDocument, type Inconsistency, type MemberRule, sameScore, type StaleMember, type WrongTypeKey } from "./IndexFacts.js"
import { type IndexContext, inScope } from "./IndexFinding.js"
import { judgeMembers } from "./IndexMembers.js"
import { fieldsCell, type PipelinedRead, pipelined, scanKeys, scanMembers, textCell, typesOf, wrongTypeCell } from "./IndexReads.js"

/**
 * The check of a family built by `documentIndexedFamily`: from the document side (each document
 * against the entries it implies, and its scope registration) and from the index side (each
 * member of each index key against its document). Two round trips per batch of documents.
 */

/** What the walk of such a family found, with what its repair needs. */
export type DocumentFinding =
  /** A document whose entries are missing or wrong: the family's repair script. */
  | {
      readonly fix: "document"
      readonly document: IndexedDocument
      readonly entries: ReadonlyArray<EntryToRepair>
      readonly problems: ReadonlyArray<Inconsistency>
    }
  /** A member whose document is missing or does not belong: removed if it still does not. */
  | { readonly fix: "member"; readonly rule: MemberRule; readonly problem: IndexEntryWithoutDocument | StaleMember }
  /** An index key of the wrong type: deleted, then rebuilt from the documents. */
  | { readonly fix: "type"; readonly problem: WrongTypeKey }
  /** Not an index problem (a malformed document, a document key of another type): reported only. */
  | { readonly fix: "none"; readonly problem: Inconsistency }

type Spec = DocumentIndexSpec<FamilyTemplates>
type Parts = Readonly<Record<string, string>>
type Handle = (batch: FamilyBatch<DocumentFinding>) => Effect.Effect<void, ConnectionError>

/** A key of the family; `undefined` when the parts cannot form one. */
const keyOf = (ctx: IndexContext, family: string, parts: Parts): string | undefined => {
  const key = ctx.keys.key(family, parts as never)
  return typeof key === "string" ? key : undefined
}

const malformed = (id: string, key: string, found: string): DocumentFinding => ({
  fix: "none",
  problem: { kind: "malformed-document", key, scope: null, member: id, expected: "fields v and scope forming keys", found }
})

/** A document's entries, or why they form no key. */
const entriesOf = (ctx: IndexContext, spec: Spec, document: IndexedDocument): ReadonlyArray<EntryToRepair> | string => {
  const entries: Array<EntryToRepair> = []
  for (const entry of spec.entriesOf(document)) {
    const rule = spec.indexes[entry.index]
    if (rule === undefined) return `entry of '${entry.index}', which is not an index family of '${spec.name}'`
    const key = keyOf(ctx, entry.index, entry.parts)
    if (key === undefined) return `the parts ${JSON.stringify(entry.parts)} of '${entry.index}' form no key`
    entries.push({ index: entry.index, key, type: rule.type, score: entry.score, ...(entry.absent === true ? { absent: true } : {}) })
  }
  return entries
}

/** Judges one document's entries from their cells (ZSCORE or SISMEMBER, in entry order). */
const judgeEntries = (document: IndexedDocument, entries: ReadonlyArray<EntryToRepair>, cells: ReadonlyArray<unknown>) => {
  const problems: Array<Inconsistency> = []
  const suspects: Array<EntryToRepair> = []
  entries.forEach((entry, i) => {
    const at = { key: entry.key, scope: document.scope, member: document.id, documentKey: document.key }
    const cell = entry.type === "zset" ? textCell(cells[i]) : cells[i]
    if (cell === wrongTypeCell) return void suspects.push(entry)
    const present = entry.type === "set" ? cell === 1 : cell !== null
    if (entry.absent === true) {
      if (present) problems.push({ kind: "stale-member", ...at, expected: "absent", found: "member" })
      return
    }
    if (!present) {
      const expected = entry.score === undefined ? "member" : `member with score ${entry.score}`
      return void problems.push({ kind: "document-missing-from-index", ...at, expected, found: "absent" })
    }
    if (entry.type === "zset" && entry.score !== undefined && !sameScore(String(cell), entry.score)) {
      problems.push({ kind: "wrong-score", ...at, expected: entry.score, found: Number(cell) })
    }
  })
  return { problems, suspects }
}

interface ReadDocument {
  readonly document: IndexedDocument
  readonly entries: ReadonlyArray<EntryToRepair>
}

/** Reads a batch of documents and the entries each implies; documents outside the context's scope are skipped. */
const readDocuments = (ctx: IndexContext, spec: Spec, found: ReadonlyArray<{ readonly id: string; readonly key: string }>) =>
  Effect.gen(function* () {
    const fields = ["v", "scope", ...(spec.fields ?? [])]
    const cells = yield* pipelined(ctx.valkey, `read ${spec.name} documents`, found.map(({ key }) => (p) => p.hmget(key, ...fields)))
    const findings: Array<DocumentFinding> = []
    // Document keys that answered WRONGTYPE: their type is read afterwards.
    const wrongTyped: Array<string> = []
    const read: Array<IndexedDocument> = []
    found.forEach(({ id, key }, i) => {
      const values = fieldsCell(cells[i])
      if (values === wrongTypeCell) return void wrongTyped.push(key)
      const [version, scope] = values
      if (version == null) return // deleted since the scan
      if (!scope) return void findings.push(malformed(id, key, "no scope"))
      if (!inScope(ctx, scope)) return
      read.push({ id, key, version, scope, fields: Object.fromEntries(fields.slice(2).map((f, j) => [f, values[j + 2] ?? null])) })
    })
    const related = spec.related === undefined || read.length === 0 ? [] : yield* spec.related(ctx.valkey, read)
    const documents: Array<ReadDocument> = []
    read.forEach((stored, i) => {
      const document = related[i] === undefined ? stored : { ...stored, fields: { ...stored.fields, ...related[i] } }
      const entries = entriesOf(ctx, spec, document)
      if (typeof entries === "string") return void findings.push(malformed(document.id, document.key, entries))
      documents.push({ document, entries })
    })
    return { findings, wrongTyped, documents }
  })

/** Reads and judges a batch of documents of the family; documents outside the context's scope are skipped. */
export const inspectFamilyDocuments = (
  ctx: IndexContext,
  spec: Spec,
  found: ReadonlyArray<{ readonly id: string; readonly key: string }>
): Effect.Effect<Array<DocumentFinding>, ConnectionError> =>
  Effect.gen(function* () {
    const { findings, wrongTyped, documents } = yield* readDocuments(ctx, spec, found)
    const types = yield* typesOf(ctx.valkey, wrongTyped)
    wrongTyped.forEach((key, i) => {
      if (types[i] === "hash" || types[i] === "none") return
      findings.push({ fix: "none", problem: { kind: "wrong-type", key, scope: null, member: null, expected: "hash", found: types[i]! } })
    })
    const reads = documents.flatMap(({ document, entries }) =>
      entries.map((e): PipelinedRead => (p) => (e.type === "zset" ? p.zscore(e.key, document.id) : p.sismember(e.key, document.id)))
    )
    const entryCells = yield* pipelined(ctx.valkey, `read ${spec.name} indexes`, reads)
    const registered = yield* registeredScopes(ctx, documents.map(({ document }) => document.scope))
    let at = 0
    const judged = documents.map(({ document, entries }) => {
      const result = judgeEntries(document, entries, entryCells.slice(at, at + entries.length))
      at += entries.length
      return { document, entries, ...result }
    })
    const suspectKeys = [...new Set(judged.flatMap((j) => j.suspects.map((s) => s.key)))]
    const suspectTypes = new Map((yield* typesOf(ctx.valkey, suspectKeys)).map((type, i) => [suspectKeys[i]!, type] as const))
    for (const { document, entries, problems, suspects } of judged) {
      for (const { key, type } of suspects) {
        const actual = suspectTypes.get(key) ?? "none"
        if (actual !== "none" && actual !== type) problems.push({ kind: "wrong-type", key, scope: document.scope, member: null, expected: type, found: actual })
      }
      if (registered !== undefined && !registered.has(document.scope)) {
        problems.push({
          kind: "scope-not-registered", key: ctx.scopesKey, scope: document.scope, member: document.scope, source: document.key, expected: "member", found: "absent"
        })
      }
      if (problems.length > 0) findings.push({ fix: "document", document, entries, problems })
    }
    return findings
  })

/** SCANs the family's documents and hands each batch, judged from the document side. */
export const walkFamilyDocuments = (ctx: IndexContext, spec: Spec, handle: Handle): Effect.Effect<void, ConnectionError> =>
  scanKeys(ctx.valkey, ctx.keys.pattern(spec.document), (keys) =>
    Effect.gen(function* () {
      const found = keys.flatMap((key) => {
        const parsed = ctx.keys.parse(key)
        return parsed?.family === spec.document ? [{ id: (parsed.parts as Parts)["id"] ?? "", key }] : []
      })
      yield* handle({ scanned: found.length, findings: yield* inspectFamilyDocuments(ctx, spec, found) })
    })
  )

/** SCANs each index family's keys and judges every member (SSCAN/ZSCAN, page by page) against its document. */
export const walkFamilyIndexes = (ctx: IndexContext, spec: Spec, handle: Handle): Effect.Effect<void, ConnectionError> =>
  Effect.forEach(
    Object.entries(spec.indexes).flatMap(([family, rule]) => (rule === undefined ? [] : [[family, rule] as const])),
    ([family, rule]) =>
      scanKeys(ctx.valkey, ctx.keys.pattern(family), (keys) =>
        Effect.gen(function* () {
          const indexKeys = keys.flatMap((key) => {
            const parsed = ctx.keys.parse(key)
            if (parsed?.family !== family) return []
            const parts = parsed.parts as Parts
            const scope = parts["scope"] ?? null
            // An index of no scope belongs to none: only an unscoped walk judges it.
            return (scope === null ? ctx.scope === undefined : inScope(ctx, scope)) ? [{ key, parts, scope }] : []
          })
          const types = yield* typesOf(ctx.valkey, indexKeys.map((k) => k.key))
          const wrongType = (key: string, scope: string | null, found: string): DocumentFinding => ({
            fix: "type", problem: { kind: "wrong-type", key, scope, member: null, expected: rule.type, found }
          })
          const badTypes = indexKeys.flatMap(({ key, scope }, i) => (types[i] !== "none" && types[i] !== rule.type ? [wrongType(key, scope, types[i]!)] : []))
          yield* handle({ scanned: badTypes.length, findings: badTypes })
          for (const [i, { key, parts, scope }] of indexKeys.entries()) {
            if (types[i] !== rule.type) continue
            const memberRule: MemberRule = { key, scope, indexType: rule.type, persistentOnly: false, belongsWhen: rule.belongsWhen(parts) }
            yield* scanMembers(ctx.valkey, key, rule.type, (ids) =>
              judgeMembers(ctx, memberRule, ids, (id) => Effect.succeed(keyOf(ctx, spec.document, { id }))).pipe(
                Effect.flatMap((problems) => handle({ scanned: ids.length, findings: problems.map((problem) => ({ fix: "member", rule: memberRule, problem })) }))
              )
            ).pipe(
              // The key changed type between TYPE and the scan: report it like any other wrong type.
              Effect.catchIf(
                (e): e is WrongType => e instanceof WrongType,
                (e) => handle({ scanned: 0, findings: [wrongType(key, scope, e.actual)] })
              )
            )
          }
        })
      ),
    { discard: true }
  )
