// Key parts on their own: the encoding, its limits and its error.
export {
  checkKeyPart,
  decodeKeyPart,
  encodeKeyPart,
  encodeKeyPartUnchecked,
  KeyPartError,
  type KeyPartProblem,
  MAX_KEY_PART_BYTES
} from "./KeyPart.js"
export { dedupeHash } from "./DedupeHash.js"
// Families of one's own (extensions): templates, part rules, sets, registration.
export { type TemplatePartNames, type TemplateParts } from "./KeyTemplate.js"
export { type PartRule } from "./PartRule.js"
export { defineKeyFamilies, type FamilyTemplates, type KeyFamilyDefinition, type KeyFamilySet } from "./KeyFamilySet.js"
export { KeyFamilyError, type KeyFamilyProblem, type RegisteredFamily } from "./FamilyRegistration.js"
// The core families.
export {
  coreKeyFamilies,
  isReferenceKind,
  type KeyFamily,
  keyFamilies,
  type KeyParts,
  type ReferenceKind,
  referenceKinds
} from "./KeyFamilies.js"
// The execution log's node sequence part: the one place its six-digit width is defined.
export { isNodeSeq, MAX_NODE_SEQ, NODE_SEQ_DIGITS, nodeSeqOf, nodeSeqPart, nodeSeqRule } from "./ExecutionLogKeys.js"
// The schema: key builders and the parser. The key laws, a test helper, are in `@microdcs/keyschema/testing`.
export {
  type CoreFamilyTemplates,
  DEFAULT_PREFIX,
  type KeySchema,
  type KeySchemaOf,
  makeKeySchema,
  type ParsedKey,
  type ParsedKeyOf
} from "./KeySchema.js"
