// The recipe model and its validation.
export {
  Action,
  Branch,
  BranchType,
  CorrelationKey,
  decodeRecipe,
  encodeRecipe,
  Interaction,
  Matches,
  Qualifier,
  Recipe,
  type RecipeJson,
  RecipeSchemaVersion,
  RecipeWire,
  RetryPolicy,
  RecipeWireV1_1,
  Step,
  Transition
} from "./recipe/Recipe.js"
export { QualifierV1_1, StopCommand } from "./recipe/QualifierSchema.js"
export { recipeJsonSchema } from "./recipe/RecipeJsonSchema.js"
export { formatPath, type RecipeProblem, type RecipeRule } from "./recipe/RecipeProblem.js"
export { jobOrderFields } from "./recipe/jobOrderFields.js"
export { reachableSteps, type RecipeGraph, stepsBeforeConverging } from "./recipe/reachability.js"
export { countersBySource, countersOf, countersOfCondition } from "./recipe/recipeCounters.js"
export { validateRecipe, validateWorkMasterRecipe } from "./recipe/validateRecipe.js"
export { subRecipeCycles, subRecipesOf } from "./recipe/subRecipeRules.js"
export {
  RECIPE_SCHEMA_ID,
  RECIPE_SCHEMA_ID_V1_1,
  RECIPE_SCHEMA_IDS,
  recipeSchemaVersion,
  versionOfSchemaId
} from "./recipe/RecipeVersions.js"
export { Duration, durationMs, parseDuration } from "./recipe/Duration.js"
export { needsV11 } from "./recipe/timeLimitRules.js"
// The condition language: parser, evaluator, printer and the AST constructors.
export * from "./condition/index.js"
// The pure engine core (src/engine/index.ts says what it exports).
export * from "./engine/index.js"
