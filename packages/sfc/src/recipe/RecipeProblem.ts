import { ParseResult } from "effect"

/** Which rule a problem breaks, so callers and tests can tell problems apart without parsing text. */
export type RecipeRule =
  | "structure"
  | "duplicate-name"
  | "initial-step"
  | "unknown-reference"
  | "branch-path"
  | "timeout"
  | "condition"
  | "counter"
  | "qualifier"
  | "unreachable"

/**
 * One thing wrong with a recipe. `path` points into the recipe with PascalCase field names and
 * array indices (`["Actions", 2, "Qualifier"]`); `message` names the element(s) so it reads on its own.
 */
export interface RecipeProblem {
  readonly rule: RecipeRule
  readonly path: ReadonlyArray<string | number>
  readonly message: string
}

/** `Actions[2].Qualifier` */
export const formatPath = (path: ReadonlyArray<string | number>): string =>
  path.reduce<string>((text, part) => (typeof part === "number" ? `${text}[${part}]` : text === "" ? part : `${text}.${part}`), "")

/** Every issue of a schema decode (run with `errors: "all"`) as a structure problem. */
export const structureProblems = (error: ParseResult.ParseError): ReadonlyArray<RecipeProblem> =>
  ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => {
    const path = issue.path.map((part) => (typeof part === "symbol" ? String(part) : part))
    const where = path.length === 0 ? "recipe" : formatPath(path)
    return { rule: "structure", path, message: `${where}: ${issue.message}` }
  })
