import { Effect, Result, Schema } from "effect"
import { acceptingSnakeCase } from "./SnakeCase.js"
import { CorrelationKey, Matches } from "./CorrelationKeySchema.js"
export { CorrelationKey, Matches } from "./CorrelationKeySchema.js"
import { Duration } from "./Duration.js"
import { qualifierFields, QualifierV1_1 } from "./QualifierSchema.js"
import { subRecipeFields } from "./SubRecipeFields.js"
import { type RecipeProblem, structureProblems } from "./RecipeProblem.js"
import { JsonObject } from "./JsonObject.js"

/** A closed set of words whose error message lists them (the default lists one issue per word). */
const oneOf = <const Words extends ReadonlyArray<string>>(...words: Words) =>
  // `structureProblems` reports a word that is none of these as one line naming them all.
  Schema.Literals(words).annotate({ expected: words.join(" or ") })

/**
 * A correlation key as `validateRecipe` starts from it: either field, any text, PascalCase or
 * snake_case, so that the correlation rules can name every problem at once. @internal
 */
const CorrelationKeyDraft = acceptingSnakeCase(
  "CorrelationKey",
  Schema.Struct({ Attribute: Schema.optionalKey(Schema.String), DataField: Schema.optionalKey(Schema.String) })
)

/** How an action of recipe schema v1.0.0 talks to the world. */
const InteractionV1_0 = oneOf("push_command", "pull_event")
/** How an action talks to the world; v1.1.0 adds `recipe`: a sub-recipe (SubRecipeFields.ts). */
export const Interaction = oneOf("push_command", "pull_event", "recipe")
export type Interaction = typeof Interaction.Type

/** `N`: dispatch on entry, the step waits for completion. `P`: pulse, dispatch on entry, no wait. */
export const Qualifier = oneOf("N", "P")
export type Qualifier = typeof Qualifier.Type

/** Which recipe schema a recipe was given under: v1.1.0 adds fields that v1.0.0 refuses. */
export const RecipeSchemaVersion = oneOf("1.0.0", "1.1.0")
export type RecipeSchemaVersion = typeof RecipeSchemaVersion.Type

export const BranchType = oneOf("simultaneous", "selection")
export type BranchType = typeof BranchType.Type

// Each element's fields as v1.0.0 has them, then the model with what v1.1.0 adds. Decoding
// accepts every field of every version (validation refuses a v1.1.0 field in a v1.0.0 recipe,
// rule `needs-v1.1`); each published JSON Schema describes its own version's fields.

const StepFieldsV1_0 = Schema.Struct({
  Name: Schema.NonEmptyString,
  Initial: Schema.Boolean.pipe(Schema.withDecodingDefaultType(Effect.succeed(false)))
})

const StepFields = Schema.Struct({
  ...StepFieldsV1_0.fields,
  /** v1.1.0: how long the step may stay active (a duration, `30s`). */
  MaxDuration: Schema.optionalKey(Duration),
  /** v1.1.0: the step or branch to go to when MaxDuration runs out; absent, the job fails. */
  OnMaxDuration: Schema.optionalKey(Schema.NonEmptyString)
})

const TransitionFields = Schema.Struct({
  /** A step or a branch. */
  Source: Schema.String,
  /** A step or a branch. */
  Target: Schema.String,
  /** Condition text, see `parseCondition`; `""`, `true` and `always` hold always. */
  Condition: Schema.String,
  /** Lower wins; ties go to the transition listed first. */
  Priority: Schema.Int.pipe(Schema.withDecodingDefaultType(Effect.succeed(0)))
})

const positiveSeconds = Schema.Number.check(Schema.isFinite(), Schema.isGreaterThan(0, { expected: "a positive number" }))

/** An action as recipe schema v1.0.0 has it (what the v1.0.0 JSON Schema describes). */
const ActionFieldsV1_0 = Schema.Struct({
  Name: Schema.NonEmptyString,
  Step: Schema.String,
  Qualifier,
  Interaction: InteractionV1_0,
  TypeId: Schema.NonEmptyString,
  TimeoutSeconds: positiveSeconds,
  Parameters: Schema.optionalKey(JsonObject)
})

/**
 * The action fields recipe schema v1.1.0 adds (validation refuses them in a v1.0.0 recipe).
 * `Results`: the fields the action's result has; conditions' names are checked against them.
 */
export const ActionFieldsV1_1 = {
  Results: Schema.optionalKey(Schema.Array(Schema.NonEmptyString)),
  Interaction,
  ...subRecipeFields
}

/** v1.1.0: how often and how far apart an action is tried again after a timeout or an error reply. */
const RetryPolicyFields = Schema.Struct({
  /** Tries in all, the first included (1: no retry). */
  MaxAttempts: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1, { expected: "a positive integer" })),
  /** The wait before the second try (default 1 s). */
  InitialIntervalSeconds: Schema.optionalKey(positiveSeconds),
  /** Each wait is the one before times this (default 2). */
  BackoffCoefficient: Schema.optionalKey(Schema.Number.check(Schema.isFinite(), Schema.isGreaterThanOrEqualTo(1, { expected: "a number of at least 1" }))),
  /** The longest wait (default 100 × the initial interval). */
  MaximumIntervalSeconds: Schema.optionalKey(positiveSeconds)
})

export const RetryPolicy = acceptingSnakeCase("RetryPolicy", RetryPolicyFields)
export interface RetryPolicy extends Schema.Schema.Type<typeof RetryPolicyFields> {}

/** The fields recipe schema v1.1.0 adds to an action; `retry` is the schema of its retry policy. */
const actionFailureFields = <R extends Schema.Top>(retry: R) => ({
  Retry: Schema.optionalKey(retry),
  /** A step or branch to go to when the action finally fails, instead of failing the job. */
  OnError: Schema.optionalKey(Schema.NonEmptyString)
})

/** The fields recipe schema v1.1.0 adds to a pull event: where its key is and what it must equal. */
const correlationFields = {
  CorrelationKey: Schema.optionalKey(CorrelationKey),
  Matches: Schema.optionalKey(Matches)
}

const ActionFields = Schema.Struct({ ...ActionFieldsV1_0.fields, Qualifier: QualifierV1_1, ...ActionFieldsV1_1, ...actionFailureFields(RetryPolicy), ...correlationFields, ...qualifierFields })

/**
 * An action of recipe schema v1.1.0 in its canonical JSON form (PascalCase inside `Retry` too):
 * for the v1.1.0 JSON Schema.
 */
export const ActionWireV1_1 = Schema.Struct({
  ...ActionFieldsV1_0.fields,
  Qualifier: QualifierV1_1,
  ...ActionFieldsV1_1,
  ...actionFailureFields(RetryPolicyFields.annotate({ identifier: "RetryPolicy" })),
  ...correlationFields,
  ...qualifierFields
}).annotate({ identifier: "Action" })

const BranchFields = Schema.Struct({
  Name: Schema.NonEmptyString,
  Type: BranchType,
  /** The paths; each is the ordered list of its steps' names. */
  Branches: Schema.Array(Schema.Array(Schema.String))
})

export const Step = acceptingSnakeCase("Step", StepFields)
export interface Step extends Schema.Schema.Type<typeof StepFields> {}

export const Transition = acceptingSnakeCase("Transition", TransitionFields)
export interface Transition extends Schema.Schema.Type<typeof TransitionFields> {}

export const Action = acceptingSnakeCase("Action", ActionFields)
export interface Action extends Schema.Schema.Type<typeof ActionFields> {}

export const Branch = acceptingSnakeCase("Branch", BranchFields)
export interface Branch extends Schema.Schema.Type<typeof BranchFields> {}

/** v1.1.0: the recipe's own fields besides its elements. */
const RecipeFieldsV1_1 = {
  /** How long the whole job may run (a duration, `2h`); the job fails when it is exceeded. */
  MaxJobDuration: Schema.optionalKey(Duration)
}

const recipeOf = <A extends Schema.Top>(action: A) =>
  acceptingSnakeCase(
    "Recipe",
    Schema.Struct({
      Steps: Schema.Array(Step),
      Transitions: Schema.Array(Transition),
      Actions: Schema.Array(action),
      Branches: Schema.optionalKey(Schema.Array(Branch)),
      ...RecipeFieldsV1_1,
      /**
       * The version the recipe runs by, from its work master's `dataschema` (not written by a
       * recipe's author): absent means 1.0.0, so a v1.0.0 recipe's JSON and digest stay as they were.
       */
      SchemaVersion: Schema.optionalKey(RecipeSchemaVersion)
    })
  )

const wireOf = <S extends Schema.Struct.Fields, A extends Schema.Struct.Fields, R extends Schema.Struct.Fields>(
  step: Schema.Struct<S>,
  action: Schema.Struct<A>,
  recipe: R
) =>
  Schema.Struct({
    Steps: Schema.Array(Schema.toEncoded(step).annotate({ identifier: "Step" })),
    Transitions: Schema.Array(Schema.toEncoded(TransitionFields).annotate({ identifier: "Transition" })),
    Actions: Schema.Array(Schema.toEncoded(action).annotate({ identifier: "Action" })),
    Branches: Schema.optionalKey(Schema.Array(Schema.toEncoded(BranchFields).annotate({ identifier: "Branch" }))),
    ...recipe
  }).annotate({ identifier: "Recipe" })

/**
 * A v1.0.0 recipe as JSON in its canonical form, PascalCase names with `Initial` and `Priority`
 * optional: what the published v1.0.0 JSON Schema describes (`recipeJsonSchema()`). Decoding with
 * `Recipe` accepts this and, besides, snake_case names.
 */
export const RecipeWire = wireOf(StepFieldsV1_0, ActionFieldsV1_0, {})

/**
 * A v1.1.0 recipe as JSON, canonical form: what `recipeJsonSchema("1.1.0")` describes. Steps may
 * have a time limit, the recipe a job time limit, actions `Results`, a `Retry` policy, an
 * `OnError` target, a `CorrelationKey` and what it `Matches`, the qualifiers of QualifierSchema.ts.
 */
export const RecipeWireV1_1 = wireOf(StepFields, ActionWireV1_1, RecipeFieldsV1_1)

/**
 * The recipe model. Decoding checks the shape and each field on its own; the rules that span
 * elements (names, references, reachability, conditions) are `validateRecipe`'s.
 */
export const Recipe = recipeOf(Action)
export interface Recipe extends Schema.Schema.Type<typeof Recipe> {}

/** A recipe as JSON: PascalCase field names, defaults filled in. */
export type RecipeJson = typeof Recipe.Encoded

/** A retry policy as `validateRecipe` starts from it: numbers left loose, judged by the `retry` rule. */
const RetryPolicyDraft = acceptingSnakeCase(
  "RetryPolicy",
  Schema.Struct({
    MaxAttempts: Schema.Number,
    InitialIntervalSeconds: Schema.optionalKey(Schema.Number),
    BackoffCoefficient: Schema.optionalKey(Schema.Number),
    MaximumIntervalSeconds: Schema.optionalKey(Schema.Number)
  })
)

/**
 * An action as `validateRecipe` starts from it: qualifier and timeout are left loose so that
 * their problems are reported together with the cross-element ones instead of hiding them.
 * @internal
 */
export const ActionDraft = acceptingSnakeCase(
  "Action",
  Schema.Struct({
    ...ActionFields.fields,
    Qualifier: Schema.String,
    TimeoutSeconds: Schema.Number,
    Retry: Schema.optionalKey(RetryPolicyDraft),
    // Checked by the correlation rules, which name every problem of it at once.
    CorrelationKey: Schema.optionalKey(CorrelationKeyDraft),
    Matches: Schema.optionalKey(Schema.String)
  })
)

/** The shape `validateRecipe` starts from: like `Recipe`, with the loose `ActionDraft`. @internal */
export const RecipeDraft = recipeOf(ActionDraft)
export type RecipeDraft = Schema.Schema.Type<typeof RecipeDraft>

const decodeAll = <A>(schema: Schema.Codec<A, RecipeJson>) => {
  // `reportInput`: the problems name the value they reject ("Expected string, actual 1").
  const decode = Schema.decodeUnknownResult(schema, { errors: "all", reportInput: true })
  return (input: unknown): Result.Result<A, ReadonlyArray<RecipeProblem>> => Result.mapError(decode(input), structureProblems)
}

/** Structural decode only (for trusted input such as a stored snapshot); never throws. */
export const decodeRecipe: (input: unknown) => Result.Result<Recipe, ReadonlyArray<RecipeProblem>> = decodeAll(Recipe)

/** @internal */
export const decodeRecipeDraft: (input: unknown) => Result.Result<RecipeDraft, ReadonlyArray<RecipeProblem>> = decodeAll(RecipeDraft)

/** The recipe as plain JSON with PascalCase field names. */
export const encodeRecipe: (recipe: Recipe) => RecipeJson = Schema.encodeSync(Recipe)
