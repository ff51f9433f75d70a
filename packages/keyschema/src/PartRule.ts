import { checkKeyPart } from "./KeyPart.js"

/**
 * What one part of a family may hold, beyond being a valid key part. Either a closed list of
 * values, or a test with examples (the examples feed the ambiguity check and the key laws, which
 * cannot invent values a test accepts).
 */
export type PartRule =
  | { readonly oneOf: ReadonlyArray<string> }
  | {
      readonly accepts: (value: string) => boolean
      readonly examples: readonly [string, ...ReadonlyArray<string>]
      /** Said in the refusal, e.g. "a decimal number". */
      readonly description?: string
    }

export const ruleAccepts = (rule: PartRule | undefined, value: string): boolean =>
  rule === undefined ? true : "oneOf" in rule ? rule.oneOf.includes(value) : rule.accepts(value)

/** Why `value` breaks the rule, for the builder's `not-allowed` refusal. */
export const ruleRefusal = (rule: PartRule, name: string, value: string, family: string): string =>
  "oneOf" in rule
    ? `${name} '${value}' is not allowed in ${family}: one of ${rule.oneOf.join(", ")}`
    : `${name} '${value}' is not allowed in ${family}${rule.description === undefined ? "" : `: ${rule.description}`}`

/** The values a rule names itself (its list or its examples); none for a free part. */
export const ruleValues = (rule: PartRule | undefined): ReadonlyArray<string> =>
  rule === undefined ? [] : "oneOf" in rule ? rule.oneOf : rule.examples

/** Why a rule cannot be used: no values, or values that are no valid key part or that it refuses itself. */
export const ruleProblem = (rule: PartRule, name: string): string | undefined => {
  const values = ruleValues(rule)
  if (values.length === 0) return `the rule of {${name}} names no value`
  for (const value of values) {
    const bad = checkKeyPart(name, value)
    if (bad) return `the rule of {${name}} names '${value}': ${bad.message}`
    if (!ruleAccepts(rule, value)) return `the rule of {${name}} refuses its own example '${value}'`
  }
  return undefined
}

/**
 * Whether two parts at the same place could hold the same value. Known when either side has a
 * closed list; two open tests (or no rule) are taken to overlap, because nothing can prove that
 * two functions refuse each other's values.
 */
export const rulesOverlap = (a: PartRule | undefined, b: PartRule | undefined): boolean => {
  if (a !== undefined && "oneOf" in a) return a.oneOf.some((v) => ruleAccepts(b, v))
  if (b !== undefined && "oneOf" in b) return b.oneOf.some((v) => ruleAccepts(a, v))
  return true
}
