import { Effect } from "effect"
import {
  deleteWrongType,
  registerScope,
  removeIndexMember,
  removeOrderPointer,
  repairJobOrder,
  repairJobResponse,
  repairWorkMaster,
  type RepairReply
} from "@microdcs/lua-scripts"
import type { ConnectionError } from "./Errors.js"
import { type Inconsistency, isIndexFamily } from "./IndexFacts.js"
import { inspectDocuments, keyOf, priorityScore } from "./IndexDocuments.js"
import { type DocumentRead, type Finding, type IndexContext, problemsOf } from "./IndexFinding.js"
import { inspectPointers } from "./IndexMembers.js"
import { IndexReadHook, MAX_INDEX_RETRIES } from "./IndexPrecondition.js"

/**
 * The rebuild's repairs, one per kind of finding. Each runs a script that re-checks, atomically,
 * what the finding was judged from, so a put landing in between is never undone: a document
 * that moved is read again (`retry`, at most {@link MAX_INDEX_RETRIES} times), a member or
 * pointer that belongs after all is kept.
 */
export interface RepairTally {
  /** Index entries added or corrected, scopes registered. */
  repaired: number
  /** Stale index entries removed. */
  removed: number
  /** Index keys of the wrong type that were deleted (then rebuilt from the documents). */
  readonly deletedKeys: Array<string>
  /** What the rebuild could not repair: malformed documents, documents that kept moving. */
  readonly unrepaired: Array<Inconsistency>
}

/**
 * Only derived keys may be deleted for holding the wrong type; data (documents, reference lists)
 * never. `scopes` only by an unscoped rebuild, which refills it for every scope.
 */
const isDerivedKey = (ctx: IndexContext, key: string): boolean => {
  if (key === ctx.scopesKey) return ctx.scope === undefined
  const parsed = ctx.valkey.keys.parse(key)
  return parsed !== undefined && isIndexFamily(parsed.family)
}

/** Deletes a derived key if it still holds another type than `expectedType` (the script re-checks). */
export const deleteWrongTypeKey = (ctx: IndexContext, key: string, expectedType: string, tally: RepairTally) =>
  Effect.gen(function* () {
    const reply = yield* ctx.valkey.script(deleteWrongType, { key }, { expectedType })
    if (reply.status === "deleted") tally.deletedKeys.push(key)
  })

const deleteIfWrongType = (ctx: IndexContext, key: string, expectedType: string, tally: RepairTally) =>
  Effect.gen(function* () {
    if (!isDerivedKey(ctx, key)) return false
    yield* deleteWrongTypeKey(ctx, key, expectedType, tally)
    return true
  })

/** A key from stored values the inspection already turned into keys: failing here is a bug. */
const storedKey = <A>(key: Effect.Effect<A | undefined>) =>
  key.pipe(Effect.flatMap((k) => (k === undefined ? Effect.die(new Error("a stored value no longer forms a key")) : Effect.succeed(k))))

const runRepair = (ctx: IndexContext, read: DocumentRead): Effect.Effect<RepairReply, ConnectionError> =>
  Effect.gen(function* () {
    const { valkey, scopesKey, nudgeChannel } = ctx
    const doc = read.key
    const common = { id: read.id, version: read.version, scope: read.scope, nudgeChannel }
    switch (read.family) {
      case "jobOrder": {
        const list = yield* storedKey(keyOf(ctx, "jobOrderList", { scope: read.scope }))
        const score = priorityScore(read.priority)
        return yield* valkey.script(repairJobOrder, { doc, list, scopes: scopesKey }, {
          ...common,
          priority: read.priority ?? "",
          score: score === undefined ? "" : String(score)
        })
      }
      case "workMaster": {
        const list = yield* storedKey(keyOf(ctx, "workMasterList", { scope: read.scope }))
        return yield* valkey.script(repairWorkMaster, { doc, list, scopes: scopesKey }, common)
      }
      case "jobResponse": {
        const { scope, state, orderId, pointerId } = read
        const keys = {
          doc,
          list: yield* storedKey(keyOf(ctx, "jobResponseList", { scope })),
          state: state === "" ? doc : yield* storedKey(keyOf(ctx, "jobResponseByState", { scope, state })),
          order: orderId === "" ? doc : yield* storedKey(keyOf(ctx, "jobResponseByOrder", { orderId })),
          responses: orderId === "" ? doc : yield* storedKey(keyOf(ctx, "jobResponseOfOrder", { orderId })),
          // The response the pointer names follows from a stored value: passed, and re-checked by the script.
          pointed: pointerId === "" || pointerId === read.id ? doc : (yield* keyOf(ctx, "jobResponse", { id: pointerId })) ?? doc,
          scopes: scopesKey
        }
        const score = read.score === undefined ? "" : String(read.score)
        return yield* valkey.script(repairJobResponse, keys, { ...common, state, orderId, start: read.start ?? "", pointerId, score })
      }
    }
  })

const repairDocument = (ctx: IndexContext, first: Extract<Finding, { fix: "document" }>, tally: RepairTally) =>
  Effect.gen(function* () {
    const hook = yield* IndexReadHook
    let { read, problems } = first
    for (let attempt = 1; attempt <= MAX_INDEX_RETRIES; attempt++) {
      yield* hook.afterRead(read.key, attempt)
      const reply = yield* runRepair(ctx, read)
      if (reply.status === "ok") return void (tally.repaired += reply.fixes)
      if (reply.status === "gone") return
      if (reply.status === "wrongtype" && !(yield* deleteIfWrongType(ctx, reply.key, reply.expected, tally))) break
      // Moved since the read, or a corrupted index key just deleted: read the document again.
      const again = yield* inspectDocuments(ctx, read.family, [{ id: read.id, key: read.key }])
      const next = again.find((f) => f.fix === "document")
      if (next === undefined) return void tally.unrepaired.push(...again.flatMap(problemsOf))
      read = next.read
      problems = next.problems
    }
    tally.unrepaired.push(...problems)
  })

const repairPointer = (ctx: IndexContext, first: Extract<Finding, { fix: "pointer" }>, tally: RepairTally) =>
  Effect.gen(function* () {
    let finding = first
    for (let attempt = 1; attempt <= MAX_INDEX_RETRIES; attempt++) {
      const { key, documentKey } = finding.problem
      const reply = yield* ctx.valkey.script(
        removeOrderPointer,
        // A pointer id that forms no key names no document; the pointer key stands in (never a hash).
        { pointer: key, doc: documentKey === "" ? key : documentKey },
        { orderId: finding.orderId, pointerId: finding.pointerId }
      )
      if (reply.status === "removed") return void (tally.removed += reply.count)
      if (reply.status === "kept") return
      if (reply.status === "wrongtype") return void (yield* deleteIfWrongType(ctx, reply.key, reply.expected, tally))
      const again = (yield* inspectPointers(ctx, [{ key, orderId: finding.orderId }])).find((f) => f.fix === "pointer")
      if (again === undefined || again.fix !== "pointer") return
      finding = again
    }
    tally.unrepaired.push(finding.problem)
  })

const repairMember = (ctx: IndexContext, finding: Extract<Finding, { fix: "member" }>, tally: RepairTally) =>
  Effect.gen(function* () {
    const { index, problem } = finding
    const reply = yield* ctx.valkey.script(
      removeIndexMember,
      { index: index.key, doc: problem.documentKey === "" ? index.key : problem.documentKey },
      { id: problem.member, indexType: index.indexType, persistentOnly: index.persistentOnly, belongsWhen: index.belongsWhen }
    )
    if (reply.status === "removed") tally.removed += reply.count
    else if (reply.status === "wrongtype") yield* deleteIfWrongType(ctx, reply.key, reply.expected, tally)
  })

/** Registers (and nudges) a scope that holds data; a registry of the wrong type is deleted first, by an unscoped rebuild only. */
export const repairScope = (ctx: IndexContext, scope: string, tally: RepairTally): Effect.Effect<void, ConnectionError> =>
  Effect.gen(function* () {
    for (let attempt = 1; attempt <= 2; attempt++) {
      const reply = yield* ctx.valkey.script(registerScope, { scopes: ctx.scopesKey }, { scope, nudgeChannel: ctx.nudgeChannel })
      if (reply.status === "ok") return void (tally.repaired += reply.added)
      yield* deleteIfWrongType(ctx, reply.key, reply.expected, tally)
    }
  })

/** Repairs one finding, adding what it did to `tally`. */
export const repairFinding = (ctx: IndexContext, finding: Finding, tally: RepairTally): Effect.Effect<void, ConnectionError> => {
  switch (finding.fix) {
    case "document":
      return repairDocument(ctx, finding, tally)
    case "member":
      return repairMember(ctx, finding, tally)
    case "pointer":
      return repairPointer(ctx, finding, tally)
    case "type":
      return Effect.asVoid(deleteIfWrongType(ctx, finding.problem.key, finding.problem.expected, tally))
    case "scope":
      return repairScope(ctx, finding.problem.member, tally)
    case "none":
      return Effect.sync(() => void tally.unrepaired.push(finding.problem))
  }
}
