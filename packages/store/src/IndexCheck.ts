import { Effect } from "effect"
import type { ConnectionError } from "./Errors.js"
import { type Inconsistency, inconsistencyId } from "./IndexFacts.js"
import { type IndexContext, problemsOf } from "./IndexFinding.js"
import { walkIndexes } from "./IndexWalk.js"

/**
 * Every inconsistency between the documents and their indexes, in the order found. Read only.
 * On a live island a write that lands between two reads of the walk can show up as a passing
 * inconsistency; run the check again (or the rebuild, which re-checks before every repair).
 */
export const checkIndexes = (ctx: IndexContext): Effect.Effect<ReadonlyArray<Inconsistency>, ConnectionError> =>
  Effect.gen(function* () {
    // SCAN may return a key twice, and every document of a broken index reports that index.
    const found = new Map<string, Inconsistency>()
    yield* walkIndexes(ctx, (batch) =>
      Effect.sync(() => {
        for (const finding of batch.findings) {
          for (const problem of problemsOf(finding)) {
            const id = inconsistencyId(problem)
            if (!found.has(id)) found.set(id, problem)
          }
        }
      })
    )
    return [...found.values()]
  })
