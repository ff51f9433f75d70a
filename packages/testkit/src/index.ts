// Test worlds that need the store; what needs only Effect and the servers is in @microdcs/test-utils
// (the store's own tests use that one, so it cannot depend on the store).
export * from "./TestStore.js"
export * from "./Writes.js"
export * from "./JobWaits.js"
export * from "./KeySnapshot.js"
export * from "./FileBroker.js"
