/**
 * `@microdcs/keyschema/testing`: the key laws as a test helper, for the core schema and for a
 * schema with an extension's families. `keySchemaLawProblems` checks that every key round-trips
 * through `parse`, that no two families share a key shape and that tricky part values stay in
 * their part; `trickyDraws` and `ruleValues` give the values it draws.
 */
export { type KeyDraw, keySchemaLawProblems, trickyDraws } from "./KeySchemaLaws.js"
export { ruleValues } from "./PartRule.js"
