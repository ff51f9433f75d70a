import { Result, Schema } from "effect"
import { ActionDraft, type RecipeDraft, Transition } from "./Recipe.js"

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** A recipe list as given, PascalCase or snake_case (`Transitions`, `transitions`); anything but an array is empty. */
const listOf = (input: Readonly<Record<string, unknown>>, name: string): ReadonlyArray<unknown> => {
  const list = input[name] ?? input[name.toLowerCase()]
  return Array.isArray(list) ? list : []
}

/**
 * Each element decoded alone; one that does not decode becomes `neutral`, which no element rule
 * objects to, so the positions in the problems' paths stay the input's.
 */
const salvage = <A, I>(schema: Schema.Codec<A, I>, elements: ReadonlyArray<unknown>, neutral: A): ReadonlyArray<A> => {
  const decode = Schema.decodeUnknownResult(schema)
  return elements.map((element) => Result.getOrElse(decode(element), () => neutral))
}

const neutralTransition = { Source: "", Target: "", Condition: "true", Priority: 0 }
const neutralAction = { Name: "", Step: "", Qualifier: "N", Interaction: "push_command", TypeId: "-", TimeoutSeconds: 1 } as const

/**
 * What can still be checked of a recipe whose shape is wrong: its transitions and actions, each
 * decoded on its own, for the rules that look at one element at a time (conditions, counter
 * names, timeouts, qualifiers). Steps and branches are left empty: the rules across elements
 * need the whole recipe, and would report the gaps the shape problems already name.
 */
export const salvageDraft = (input: unknown): RecipeDraft => {
  if (!isObject(input)) return { Steps: [], Transitions: [], Actions: [] }
  const version = input["SchemaVersion"] ?? input["schema_version"]
  return {
    // The version-bound rules judge each element by the version the recipe says it is.
    ...(version === "1.0.0" || version === "1.1.0" ? { SchemaVersion: version } : {}),
    Steps: [],
    Transitions: salvage(Transition, listOf(input, "Transitions"), neutralTransition),
    Actions: salvage(ActionDraft, listOf(input, "Actions"), neutralAction)
  }
}
