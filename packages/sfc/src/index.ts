export {
  Action,
  Branch,
  BranchType,
  decodeRecipe,
  encodeRecipe,
  Interaction,
  Qualifier,
  Recipe,
  type RecipeJson,
  Step,
  Transition
} from "./recipe/Recipe.js"
export { formatPath, type RecipeProblem, type RecipeRule } from "./recipe/RecipeProblem.js"
export { reachableSteps, type RecipeGraph } from "./recipe/reachability.js"
export { RECIPE_SCHEMA_ID, validateRecipe, validateWorkMasterRecipe } from "./recipe/validateRecipe.js"
export * from "./condition/index.js"
// The engine core (src/engine) adds its exports below.
export * from "./engine/index.js"
export * from "./runtime/index.js"
