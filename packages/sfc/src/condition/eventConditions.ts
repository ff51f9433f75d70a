import { Result } from "effect"
import { evaluateCondition } from "./evaluateCondition.js"
import { parseCondition } from "./parseCondition.js"

/** A condition on one event: a compiled predicate, or what is wrong with the text. */
export type EventCondition = { readonly predicate: (event: unknown) => boolean } | { readonly problem: string }

/**
 * The recipe condition language evaluated on an event instead of a step's results: the language of
 * a journal counter's `when` (give it to the journal as `JournalOptions.layer({ conditions:
 * eventConditions })`; every process that reads or writes journal configurations, the daemon and
 * the admin CLI alike, must, or a configuration with a `when` does not read back). A plain name
 * reads a field of the event's `data` first, then an attribute of the event (`!torque_ok`,
 * `result == "NOK"`, `type == "..."`); `data.x` and `event.x` name the one place.
 */
export const eventConditions: { readonly compile: (text: string) => EventCondition } = {
  compile: (text) => {
    const parsed = parseCondition(text)
    if (Result.isFailure(parsed)) return { problem: `${parsed.failure.message} (at character ${parsed.failure.position})` }
    const ast = parsed.success
    return {
      predicate: (event) => {
        const data = typeof event === "object" && event !== null ? (event as { readonly data?: unknown }).data : undefined
        // Later entries win a plain name: the data's fields before the event's attributes.
        return evaluateCondition(ast, { results: [{ action: "event", result: event }, { action: "data", result: data }] })
      }
    }
  }
}
