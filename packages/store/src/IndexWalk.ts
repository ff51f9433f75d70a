import { Effect } from "effect"
import type { KeyFamily } from "@microdcs/keyschema"
import { type DocumentFamily, isIndexFamily } from "./IndexFacts.js"
import { inspectDocuments, registeredScopes } from "./IndexDocuments.js"
import type { FamilyBatch } from "./IndexedFamily.js"
import type { Finding, IndexContext } from "./IndexFinding.js"
import { inScope } from "./IndexFinding.js"
import { type IndexKeyEntry, inspectIndexKeys } from "./IndexMembers.js"
import { scanKeys, typesOf } from "./IndexReads.js"

/**
 * The walks of the core families, one per phase of the default registry (IndexCoreFamilies.ts),
 * in this order:
 *
 * - `scopes`: the `scopes` registry itself must be a set;
 * - `joborder`, `jobresponse`, `workmaster`: one SCAN per document kind (`joborder:*` also
 *   yields the kind's index keys); each batch is inspected from the document side and from the
 *   index side;
 * - `references`: reference lists hold data too, so their scopes must be registered (the
 *   add-references script registers them). Acceptance limits are configuration: JobAcceptanceDao
 *   stores one without registering its scope, so a scope with only a limit is not required in
 *   `scopes` (add `jobAcceptance` to {@link scopeHolders} once the DAO registers it).
 *
 * The handler gets every batch as soon as it is inspected (at least once per SCAN batch, empty
 * ones included), so the rebuild repairs as it goes and memory stays bounded.
 */
export type BatchHandler<E, R> = (batch: FamilyBatch<Finding>) => Effect.Effect<void, E, R>

export const walkScopes = <E, R>(ctx: IndexContext, handle: BatchHandler<E, R>) =>
  Effect.gen(function* () {
    const [type] = yield* typesOf(ctx.valkey, [ctx.scopesKey])
    if (type === "set" || type === "none") return yield* handle({ scanned: 1, findings: [] })
    const problem = { kind: "wrong-type", key: ctx.scopesKey, scope: null, member: null, expected: "set", found: type! } as const
    // Deleting the registry is only safe for a walk that refills it for every scope.
    const findings: Array<Finding> = [ctx.scope === undefined ? { fix: "type", problem } : { fix: "none", problem }]
    yield* handle({ scanned: 1, findings })
  })

export const walkDocuments = <E, R>(ctx: IndexContext, family: DocumentFamily, handle: BatchHandler<E, R>) =>
  scanKeys(ctx.valkey, ctx.valkey.keys.pattern(family), (keys) =>
    Effect.gen(function* () {
      const documents: Array<{ id: string; key: string }> = []
      const indexes: Array<IndexKeyEntry> = []
      for (const key of keys) {
        // The glob of `joborder:{id}` also matches `joborder:list:{scope}`: the parser tells them apart.
        const parsed = ctx.valkey.keys.parse(key)
        if (parsed === undefined) continue
        const parts = parsed.parts as Readonly<Record<string, string>>
        if (parsed.family === family) documents.push({ id: parts["id"] ?? "", key })
        else if (isIndexFamily(parsed.family)) indexes.push({ family: parsed.family, key, parts })
      }
      const findings = yield* inspectDocuments(ctx, family, documents)
      yield* handle({ scanned: documents.length, findings })
      yield* inspectIndexKeys(ctx, indexes, (scanned, found) => handle({ scanned, findings: found }))
    })
  )

/** Key families that hold data of a scope without being documents; their scopes must be registered. */
const scopeHolders: ReadonlyArray<KeyFamily> = ["referenceList"]

export const walkReferences = <E, R>(ctx: IndexContext, handle: BatchHandler<E, R>) =>
  Effect.forEach(
    scopeHolders,
    (family) =>
      scanKeys(ctx.valkey, ctx.valkey.keys.pattern(family), (keys) =>
        Effect.gen(function* () {
          const holders = keys.flatMap((key) => {
            const parsed = ctx.valkey.keys.parse(key)
            const scope = parsed?.family === family ? (parsed.parts as Readonly<Record<string, string>>)["scope"] : undefined
            return scope !== undefined && inScope(ctx, scope) ? [{ key, scope }] : []
          })
          const registered = yield* registeredScopes(ctx, holders.map((h) => h.scope))
          const findings: Array<Finding> = holders.flatMap(({ key, scope }) =>
            registered === undefined || registered.has(scope)
              ? []
              : [{ fix: "scope", problem: { kind: "scope-not-registered", key: ctx.scopesKey, scope, member: scope, source: key, expected: "member", found: "absent" } } as const]
          )
          yield* handle({ scanned: holders.length, findings })
        })
      ),
    { discard: true }
  )
