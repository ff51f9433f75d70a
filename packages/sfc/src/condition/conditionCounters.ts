import type { ConditionAst } from "./ConditionAst.js"
import { conditionReads } from "./conditionReads.js"

/** The largest counter name the journal accepts. */
export const maxCounterNameLength = 64

// The journal's rule for counter names (its configuration refuses any other), repeated here
// because the condition language does not depend on the journal.
const counterNamePattern = new RegExp(`^[A-Za-z][A-Za-z0-9_.-]{0,${maxCounterNameLength - 1}}$`)

/** Whether `name` can be a journal counter's name: a letter, then letters, digits, `_`, `.`, `-`. */
export const isCounterName = (name: string): boolean => counterNamePattern.test(name)

/** The counters a condition names, each once, in the order they first appear. */
export const countersIn = (ast: ConditionAst): ReadonlyArray<string> => conditionReads(ast).counters
