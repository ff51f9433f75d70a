import type { KeyFamilySet } from "./KeyFamilySet.js"
import { checkKeyPart } from "./KeyPart.js"
import { compileTemplate, type TemplateToken } from "./KeyTemplate.js"
import { type PartRule, ruleAccepts, ruleProblem, rulesOverlap } from "./PartRule.js"

export type KeyFamilyProblem = "bad-name" | "bad-template" | "bad-rule" | "name-taken" | "ambiguous"

/** Why a family set was refused at registration. A value, not an exception, like {@link KeyPartError}. */
export class KeyFamilyError {
  readonly _tag = "KeyFamilyError"
  constructor(
    readonly problem: KeyFamilyProblem,
    /** The family being registered. */
    readonly family: string,
    readonly message: string,
    /** The registered family it clashes with (`name-taken`, `ambiguous`). */
    readonly other?: string
  ) {}
}

/** A family as a schema holds it: compiled template and the rules of its parts. */
export interface RegisteredFamily<F extends string = string> {
  readonly name: F
  readonly template: string
  readonly tokens: ReadonlyArray<TemplateToken>
  readonly parts: ReadonlyArray<string>
  readonly rules: { readonly [part: string]: PartRule }
}

const familyName = /^[A-Za-z][A-Za-z0-9_]*$/

/** Whether a literal token and a part token at the same place could read the same. */
const literalFits = (literal: string, rule: PartRule | undefined): boolean =>
  checkKeyPart("literal", literal) === undefined && ruleAccepts(rule, literal)

/**
 * Whether some key fits both templates. Encoded parts never hold a separator, so a key splits
 * into tokens one way only, and two templates share a key exactly when every token place could.
 */
const couldShareKey = (a: RegisteredFamily, b: RegisteredFamily): boolean =>
  a.tokens.length === b.tokens.length &&
  a.tokens.every((ta, i) => {
    const tb = b.tokens[i]!
    if (ta.separator !== tb.separator) return false
    if (ta.literal !== undefined) return tb.literal !== undefined ? ta.literal === tb.literal : literalFits(ta.literal, b.rules[tb.part!])
    if (tb.literal !== undefined) return literalFits(tb.literal, a.rules[ta.part!])
    return rulesOverlap(a.rules[ta.part!], b.rules[tb.part!])
  })

const compileFamily = (
  name: string,
  template: string,
  rules: { readonly [part: string]: PartRule }
): RegisteredFamily | KeyFamilyError => {
  if (!familyName.test(name)) {
    return new KeyFamilyError("bad-name", name, `family name '${name}' must be a letter followed by letters, digits or '_'`)
  }
  const tokens = compileTemplate(template)
  if (typeof tokens === "string") return new KeyFamilyError("bad-template", name, `template '${template}' of ${name}: ${tokens}`)
  const parts = tokens.flatMap((t) => (t.part === undefined ? [] : [t.part]))
  for (const [part, rule] of Object.entries(rules)) {
    if (!parts.includes(part)) return new KeyFamilyError("bad-rule", name, `${name} has a rule for {${part}}, which its template '${template}' lacks`)
    const problem = ruleProblem(rule, part)
    if (problem) return new KeyFamilyError("bad-rule", name, `${name}: ${problem}`)
  }
  return { name, template, tokens, parts, rules }
}

/**
 * Adds a family set to the families a schema already has, or refuses it: a bad name, template or
 * rule, a name already taken, or a template that could give a key another family also gives
 * (the parser could not tell them apart, and one family's writes would land in the other's keys).
 */
export const registerFamilies = (
  registered: ReadonlyArray<RegisteredFamily>,
  set: KeyFamilySet
): ReadonlyArray<RegisteredFamily> | KeyFamilyError => {
  const all = [...registered]
  for (const [name, template] of Object.entries(set.templates)) {
    const family = compileFamily(name, template, set.rules[name] ?? {})
    if (family instanceof KeyFamilyError) return family
    const taken = all.find((f) => f.name === name)
    if (taken) return new KeyFamilyError("name-taken", name, `a key family '${name}' is already registered ('${taken.template}')`, name)
    const clash = all.find((f) => couldShareKey(f, family))
    if (clash) {
      return new KeyFamilyError(
        "ambiguous",
        name,
        `template '${template}' of ${name} can give the same key as '${clash.template}' of ${clash.name}; give it a literal of its own`,
        clash.name
      )
    }
    all.push(family)
  }
  return all
}
