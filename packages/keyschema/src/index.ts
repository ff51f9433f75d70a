export * from "./KeyPart.js"
export * from "./DedupeHash.js"
export * from "./KeyFamilies.js"
export * from "./KeySchema.js"
