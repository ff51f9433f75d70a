/**
 * A key template: the text after `{prefix}:`, tokens separated by `:` or `|`, each token a
 * literal word or one `{name}` part. Builders, the parser and SCAN patterns all read templates
 * through this file.
 */

/** The part names of a template, e.g. `"scope" | "state"` for `jobresponse:bystate:{scope}:{state}`. */
export type TemplatePartNames<T extends string> = T extends `${string}{${infer P}}${infer Rest}`
  ? P | TemplatePartNames<Rest>
  : never

/** The named parts a template needs, e.g. `{ scope: string; state: string }`. */
export type TemplateParts<T extends string> = { readonly [P in TemplatePartNames<T>]: string }

/** A template split into literal and part tokens, with the separator (`:` or `|`) before each. */
export interface TemplateToken {
  readonly separator: "" | ":" | "|"
  readonly literal?: string
  readonly part?: string
}

export const tokenize = (text: string): ReadonlyArray<{ separator: "" | ":" | "|"; text: string }> => {
  const tokens: Array<{ separator: "" | ":" | "|"; text: string }> = []
  let separator: "" | ":" | "|" = ""
  let start = 0
  for (let i = 0; i <= text.length; i++) {
    const ch = text[i]
    if (i === text.length || ch === ":" || ch === "|") {
      tokens.push({ separator, text: text.slice(start, i) })
      separator = ch === ":" || ch === "|" ? ch : ""
      start = i + 1
    }
  }
  return tokens
}

const partToken = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/
// Literals need no encoding and no escaping in a SCAN glob, so a literal equals its own key text.
const literalToken = /^[A-Za-z0-9._-]+$/

/** The tokens of a template, or why it is not one (empty token, stray brace, repeated part). */
export const compileTemplate = (template: string): ReadonlyArray<TemplateToken> | string => {
  const tokens: Array<TemplateToken> = []
  const seen = new Set<string>()
  for (const { separator, text } of tokenize(template)) {
    const part = partToken.exec(text)?.[1]
    if (part !== undefined) {
      if (seen.has(part)) return `part {${part}} appears twice`
      seen.add(part)
      tokens.push({ separator, part })
    } else if (literalToken.test(text)) {
      tokens.push({ separator, literal: text })
    } else {
      return text.length === 0
        ? "a token is empty (separator at the start or end, or two in a row)"
        : `token '${text}' is neither a {part} nor a literal of letters, digits, '.', '_' and '-'`
    }
  }
  return tokens
}
