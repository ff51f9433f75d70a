/**
 * `@microdcs/sfc/testing`: recipe JSON builders for tests (steps, transitions, push and pull
 * actions, a linear recipe), for the engine's own tests, the runtime's and a team's recipes.
 */
export { recipeBuilders } from "./recipe/recipeBuilders.js"
