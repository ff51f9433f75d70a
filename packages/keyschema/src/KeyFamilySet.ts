import type { TemplatePartNames } from "./KeyTemplate.js"
import type { PartRule } from "./PartRule.js"

/** Family name to template: the type a schema's builders check their part names against. */
export type FamilyTemplates = { readonly [family: string]: string }

/** One family as written: its template alone, or its template with rules for some of its parts. */
export type KeyFamilyDefinition =
  | string
  | { readonly template: string; readonly parts?: { readonly [part: string]: PartRule } }

type TemplateOf<D> = D extends string ? D : D extends { readonly template: infer T extends string } ? T : never

/** Families defined together, to be registered in a key schema (`makeKeySchema`, `schema.extend`). */
export interface KeyFamilySet<T extends FamilyTemplates = FamilyTemplates> {
  readonly _tag: "KeyFamilySet"
  readonly templates: T
  readonly rules: { readonly [F in keyof T]?: { readonly [part: string]: PartRule } }
}

// A rule may only name a part of its own template: a typo is a type error, not a rule that never runs.
type RulesOnOwnParts<D> = {
  readonly [F in keyof D]: D[F] extends { readonly template: infer T extends string; readonly parts: infer P }
    ? { readonly template: T; readonly parts: { readonly [K in keyof P]: K extends TemplatePartNames<T> ? PartRule : never } }
    : D[F]
}

/**
 * Defines key families: a template per family (see the package README for the template rules),
 * optionally with a rule per part. Nothing is checked here; registering the set in a schema
 * checks the templates and refuses a name or a key shape another family already has.
 */
export const defineKeyFamilies = <const D extends { readonly [family: string]: KeyFamilyDefinition }>(
  definitions: D & RulesOnOwnParts<D>
): KeyFamilySet<{ readonly [F in keyof D & string]: TemplateOf<D[F]> }> => {
  const templates: Record<string, string> = {}
  const rules: Record<string, { readonly [part: string]: PartRule }> = {}
  for (const [family, definition] of Object.entries(definitions as { readonly [family: string]: KeyFamilyDefinition })) {
    if (typeof definition === "string") templates[family] = definition
    else {
      templates[family] = definition.template
      if (definition.parts !== undefined) rules[family] = definition.parts
    }
  }
  return { _tag: "KeyFamilySet", templates, rules } as KeyFamilySet<{ readonly [F in keyof D & string]: TemplateOf<D[F]> }>
}
