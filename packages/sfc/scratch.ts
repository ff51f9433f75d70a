import fc from "fast-check"
import { validateRecipe, decodeRecipe, parseCondition, evaluateCondition } from "./src/index.js"
import { Either } from "effect"
const recipeLike = fc.record({
  Steps: fc.array(fc.record({ Name: fc.constantFrom("A", "B", ""), Initial: fc.anything() }, { requiredKeys: [] })),
  Transitions: fc.array(fc.dictionary(fc.constantFrom("Source", "target", "Condition", "priority"), fc.oneof(fc.string(), fc.integer(), fc.anything()))),
  Actions: fc.array(fc.dictionary(fc.constantFrom("Name", "step", "Qualifier", "interaction", "type_id", "timeout_seconds", "Parameters"), fc.anything())),
  Branches: fc.anything()
}, { requiredKeys: [] })
fc.assert(fc.property(fc.oneof(fc.anything({ withNullPrototype: true, withObjectString: true, withBoxedValues: true, withMap: true, withSet: true, withTypedArray: true, withSparseArray: true, withDate: true }), recipeLike), (input) => {
  validateRecipe(input); decodeRecipe(input)
}), { numRuns: 100000 })
console.log("ok")
