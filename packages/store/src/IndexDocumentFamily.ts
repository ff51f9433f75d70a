import { Effect } from "effect"
import type { FamilyTemplates } from "@microdcs/keyschema"
import { removeIndexMember } from "@microdcs/lua-scripts"
import type { IndexedFamily } from "./IndexedFamily.js"
import { type DocumentFinding, inspectFamilyDocuments, walkFamilyDocuments, walkFamilyIndexes } from "./IndexDocumentInspection.js"
import type { IndexContext } from "./IndexFinding.js"
import { IndexReadHook, MAX_INDEX_RETRIES } from "./IndexPrecondition.js"
import { deleteWrongTypeKey, type RepairTally, repairScope } from "./IndexRepair.js"
import type { DocumentIndexSpec } from "./IndexDocumentSpec.js"

export type { DocumentFinding } from "./IndexDocumentInspection.js"
export type { DocumentIndexRule, DocumentIndexSpec, EntryToRepair, ImpliedEntry, IndexedDocument } from "./IndexDocumentSpec.js"

/** An index key of the family, so one of the wrong type may be deleted and rebuilt. */
const isIndexKey = (ctx: IndexContext, spec: DocumentIndexSpec<FamilyTemplates>, key: string): boolean => {
  const parsed = ctx.keys.parse(key)
  return parsed !== undefined && spec.indexes[parsed.family] !== undefined
}

const repairDocument = (
  ctx: IndexContext,
  spec: DocumentIndexSpec<FamilyTemplates>,
  first: Extract<DocumentFinding, { fix: "document" }>,
  tally: RepairTally
) =>
  Effect.gen(function* () {
    const hook = yield* IndexReadHook
    let finding = first
    for (let attempt = 1; attempt <= MAX_INDEX_RETRIES; attempt++) {
      const { document, entries, problems } = finding
      yield* hook.afterRead(document.key, attempt)
      const reply = yield* spec.repair({ valkey: ctx.valkey, document, entries })
      if (reply.status === "ok") {
        tally.repaired += reply.fixes
        if (problems.some((p) => p.kind === "scope-not-registered")) yield* repairScope(ctx, document.scope, tally)
        return
      }
      if (reply.status === "gone") return
      if (reply.status === "wrongtype") {
        if (!isIndexKey(ctx, spec, reply.key)) break
        yield* deleteWrongTypeKey(ctx, reply.key, reply.expected, tally)
      }
      // Moved since the read, or a corrupted index key just deleted: read the document again.
      const again = yield* inspectFamilyDocuments(ctx, spec, [{ id: document.id, key: document.key }])
      const next = again.find((f) => f.fix === "document")
      if (next === undefined || next.fix !== "document") return void tally.unrepaired.push(...again.flatMap(problemsOf))
      finding = next
    }
    tally.unrepaired.push(...finding.problems)
  })

const repairMember = (ctx: IndexContext, finding: Extract<DocumentFinding, { fix: "member" }>, tally: RepairTally) =>
  Effect.gen(function* () {
    const { rule, problem } = finding
    const reply = yield* ctx.valkey.script(
      removeIndexMember,
      // An id that forms no key names no document; the index key stands in (never a hash).
      { index: rule.key, doc: problem.documentKey === "" ? rule.key : problem.documentKey },
      { id: problem.member, indexType: rule.indexType, persistentOnly: rule.persistentOnly, belongsWhen: rule.belongsWhen }
    )
    if (reply.status === "removed") tally.removed += reply.count
    else if (reply.status === "wrongtype") yield* deleteWrongTypeKey(ctx, reply.key, reply.expected, tally)
  })

const problemsOf = (finding: DocumentFinding) => (finding.fix === "document" ? finding.problems : [finding.problem])

/**
 * An {@link IndexedFamily} for hash documents indexed by sets and sorted sets, from a
 * declaration: its documents are scanned and each is judged against the entries it implies;
 * every key of its index families is scanned and each member judged against its document.
 * Repairs are safe on a live island: the family's script re-checks the document's version,
 * a stray member is removed by the core `remove-index-member` script only if its document
 * still does not belong, and only the family's own index keys are ever deleted (for holding
 * the wrong type).
 */
export const documentIndexedFamily = <const T extends FamilyTemplates>(spec: DocumentIndexSpec<T>): IndexedFamily<DocumentFinding> => {
  const erased = spec as unknown as DocumentIndexSpec<FamilyTemplates>
  return {
    name: spec.name,
    version: spec.version,
    keyFamilies: spec.keyFamilies,
    inspect: (ctx, handle) =>
      Effect.gen(function* () {
        yield* walkFamilyDocuments(ctx, erased, handle)
        yield* walkFamilyIndexes(ctx, erased, handle)
      }),
    problemsOf,
    repair: (ctx, finding, tally) => {
      switch (finding.fix) {
        case "document":
          return repairDocument(ctx, erased, finding, tally)
        case "member":
          return repairMember(ctx, finding, tally)
        case "type":
          return Effect.asVoid(deleteWrongTypeKey(ctx, finding.problem.key, finding.problem.expected, tally))
        case "none":
          return Effect.sync(() => void tally.unrepaired.push(finding.problem))
      }
    }
  }
}
