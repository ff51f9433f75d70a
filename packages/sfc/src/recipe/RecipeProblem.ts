import { Formatter, type Schema, SchemaAST, SchemaIssue } from "effect"

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
  /** A construct of recipe schema v1.1.0 in a recipe that says v1.0.0. */
  | "needs-v1.1"
  /** A step's time limit that cannot work (`OnMaxDuration` without `MaxDuration`, or into a branch path). */
  | "time-limit"
  /** A name in a condition that nothing the transition can read supplies (v1.1.0). */
  | "condition-name"
  /** An action's Retry policy that is not one (v1.1.0). */
  | "retry"
  /** A pull event's `CorrelationKey` or `Matches` (where its key is, what the key must equal). */
  | "correlation-key"
  /** A sub-recipe action (`Interaction: "recipe"`) without its work master, or its fields on another action (v1.1.0). */
  | "sub-recipe"
  /** A work master that reaches itself through sub-recipes (found where work masters are stored). */
  | "sub-recipe-cycle"

/**
 * One thing wrong with a recipe. `path` points into the recipe with PascalCase field names and
 * array indices (`["Actions", 2, "Qualifier"]`); `message` names the element(s) so it reads on its own.
 */
export interface RecipeProblem {
  readonly rule: RecipeRule
  readonly path: ReadonlyArray<string | number>
  readonly message: string
  /** For a `condition-name` problem: what the condition could read instead, as condition text. */
  readonly candidates?: ReadonlyArray<string>
}

/** `Actions[2].Qualifier` */
export const formatPath = (path: ReadonlyArray<string | number>): string =>
  path.reduce<string>((text, part) => (typeof part === "number" ? `${text}[${part}]` : text === "" ? part : `${text}.${part}`), "")

// Must not throw on anything: an object with a broken toString is valid input to report on.
const show = (value: unknown): string => {
  if (typeof value === "string") return JSON.stringify(value)
  if (Array.isArray(value)) return "an array"
  return typeof value === "object" && value !== null ? "an object" : String(value)
}

const actual = (issue: SchemaIssue.Issue, render: (value: unknown) => string = Formatter.format): string =>
  SchemaIssue.hasInput(issue) ? `, actual ${render(issue.input)}` : ""

/** What a schema expects, in words: its identifier, `ReadonlyArray<Step>`, or effect's own name for it. */
const expected = (ast: SchemaAST.AST): string => {
  const identifier = SchemaAST.resolveIdentifier(ast)
  if (identifier !== undefined) return identifier
  if (ast._tag === "Arrays" && ast.elements.length === 0 && ast.rest.length === 1) return `ReadonlyArray<${expected(ast.rest[0]!)}>`
  return SchemaIssue.makeFormatterDefault()(new SchemaIssue.InvalidType(ast)).replace(/^Expected /, "")
}

const annotated = (annotations: Schema.Annotations.Issue | undefined, key: "message" | "expected"): string | undefined => {
  const value = annotations?.[key]
  return typeof value === "string" ? value : undefined
}

/** One issue's message, worded as the problems always were: `Expected string, actual 1`, `is missing`. */
const leafMessage = (issue: SchemaIssue.Leaf | SchemaIssue.AnyOf): string => {
  switch (issue._tag) {
    case "InvalidType":
      return `Expected ${expected(issue.ast)}${actual(issue)}`
    case "InvalidValue": {
      const message = annotated(issue.annotations, "message")
      const wanted = annotated(issue.annotations, "expected")
      return message ?? (wanted === undefined ? `Invalid data${actual(issue)}` : `Expected ${wanted}${actual(issue)}`)
    }
    // No member of a union of words matched: one line naming every word instead of one per word.
    case "AnyOf":
      return `Expected ${expected(issue.ast)}${actual(issue, show)}`
    case "MissingKey":
      return "is missing"
    case "UnexpectedKey":
      return "is unexpected"
    case "Forbidden":
      return "is forbidden"
    case "OneOf":
      return `Expected exactly one member to match${actual(issue)}`
  }
}

const filterMessage = (issue: SchemaIssue.Filter): string =>
  annotated(issue.filter.annotations, "message") ??
    `Expected ${annotated(issue.filter.annotations, "expected") ?? "a valid value"}${actual(issue)}`

type Flat = { readonly path: ReadonlyArray<PropertyKey>; readonly message: string }

const flatten = (issue: SchemaIssue.Issue, path: ReadonlyArray<PropertyKey>): ReadonlyArray<Flat> => {
  switch (issue._tag) {
    case "Pointer":
      return flatten(issue.issue, [...path, ...issue.path])
    case "Encoding":
      return flatten(issue.issue, path)
    case "Filter":
      return [{ path, message: filterMessage(issue) }]
    case "Composite":
      return issue.issues.flatMap((inner) => flatten(inner, path))
    case "AnyOf":
      return issue.issues.length > 0 ? issue.issues.flatMap((inner) => flatten(inner, path)) : [{ path, message: leafMessage(issue) }]
    default:
      return [{ path, message: leafMessage(issue) }]
  }
}

/** Every issue of a schema decode (run with `errors: "all"` and `reportInput: true`) as a structure problem. */
export const structureProblems = (error: Schema.SchemaError): ReadonlyArray<RecipeProblem> =>
  flatten(error.issue, []).map((issue) => {
    const path = issue.path.map((part) => (typeof part === "symbol" ? String(part) : part))
    const where = path.length === 0 ? "recipe" : formatPath(path)
    return { rule: "structure", path, message: `${where}: ${issue.message}` }
  })
