import { Effect } from "effect"
import type { ConnectionError } from "./Errors.js"
import type { IndexedFamily } from "./IndexedFamily.js"
import { type Inconsistency, inconsistencyId } from "./IndexFacts.js"
import type { IndexContext } from "./IndexFinding.js"

/**
 * Every inconsistency between the documents and their indexes, family by family in registry
 * order, in the order found. Read only. On a live island a write that lands between two reads
 * of the walk can show up as a passing inconsistency; run the check again (or the rebuild,
 * which re-checks before every repair).
 */
export const checkIndexes = (
  ctx: IndexContext,
  families: ReadonlyArray<IndexedFamily>
): Effect.Effect<ReadonlyArray<Inconsistency>, ConnectionError> =>
  Effect.gen(function* () {
    // SCAN may return a key twice, and every document of a broken index reports that index.
    const found = new Map<string, Inconsistency>()
    for (const family of families) {
      yield* family.inspect(ctx, (batch) =>
        Effect.sync(() => {
          for (const finding of batch.findings) {
            for (const problem of family.problemsOf(finding)) {
              const id = inconsistencyId(problem)
              if (!found.has(id)) found.set(id, problem)
            }
          }
        })
      )
    }
    return [...found.values()]
  })
