export * from "./KeyPart.js"
export * from "./DedupeHash.js"
export { type TemplatePartNames, type TemplateParts, type TemplateToken, tokenize } from "./KeyTemplate.js"
export { type PartRule, ruleValues } from "./PartRule.js"
export { defineKeyFamilies, type FamilyTemplates, type KeyFamilyDefinition, type KeyFamilySet } from "./KeyFamilySet.js"
export { KeyFamilyError, type KeyFamilyProblem, type RegisteredFamily } from "./FamilyRegistration.js"
export {
  compiledFamilies,
  compiledFamily,
  coreKeyFamilies,
  isReferenceKind,
  type KeyFamily,
  keyFamilies,
  type KeyParts,
  type ReferenceKind,
  referenceKinds
} from "./KeyFamilies.js"
export * from "./KeySchema.js"
export * from "./KeySchemaLaws.js"
