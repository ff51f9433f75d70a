/**
 * `@microdcs/store/testing`: seams for tests, not for production code. `IndexReadHook` runs
 * between a write's read of the stored values and the script that re-checks them, so a test
 * can move them in between and make the `retry` path deterministic instead of a race.
 */
export { IndexReadHook } from "./IndexPrecondition.js"
