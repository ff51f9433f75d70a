import { Either } from "effect"
import type { ConditionLanguage } from "@microdcs/journal"
import { evaluateCondition, parseCondition } from "@microdcs/sfc"

/**
 * The language of a journal counter's `when` (journal.md §1): the recipe condition language,
 * evaluated on the event instead of a step's results. A plain name reads a field of the event's
 * `data` first, then an attribute of the event (`!torque_ok`, `result == "NOK"`, `type == "..."`);
 * `data.x` and `event.x` name the one place.
 */
export const journalConditions: ConditionLanguage = {
  compile: (text) => {
    const parsed = parseCondition(text)
    if (Either.isLeft(parsed)) return { problem: `${parsed.left.message} (at character ${parsed.left.position})` }
    const ast = parsed.right
    return {
      predicate: (event) => {
        const data = typeof event === "object" && event !== null ? (event as { readonly data?: unknown }).data : undefined
        // Later entries win a plain name: the data's fields before the event's attributes.
        return evaluateCondition(ast, { results: [{ action: "event", result: event }, { action: "data", result: data }] })
      }
    }
  }
}
