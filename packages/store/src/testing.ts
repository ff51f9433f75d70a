/**
 * `@microdcs/store/testing`: seams for tests, not for production code. `IndexReadHook` runs
 * between a write's read of the stored values and the script that re-checks them, so a test
 * can move them in between and make the `retry` path deterministic instead of a race.
 * `membershipOf`, `judgeMember` and `startScore` are the index check's per-member judgement, to
 * test on their own; `autoClaimDeletedCounter` is the metric a test reads to see XAUTOCLAIM
 * report deleted entries; `interceptCommands` runs a `Valkey`'s raw commands through a wrapper
 * (a test counts the reads a service makes). `jobOrderSearchFacts` and `cutUtf8` are the search
 * facts a job order write passes, to hold against the scripts' own decode of the document.
 */
export { IndexReadHook } from "./IndexPrecondition.js"
export { judgeMember, membershipOf, startScore } from "./IndexFacts.js"
export { autoClaimDeletedCounter } from "./ValkeyStreams.js"
export { interceptCommands } from "./RawDoor.js"
export { cutUtf8, jobOrderSearchFacts } from "./JobOrderSearchFacts.js"
