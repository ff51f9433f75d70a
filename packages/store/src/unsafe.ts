/**
 * `@microdcs/store/unsafe`: the raw client, for what the store's services do not cover, such as a
 * test that plants a corrupted key or reads a server statistic. What runs here bypasses the
 * store's guarantees: no typed errors beyond the connection's (a WRONGTYPE reply is a defect), no
 * key checks, no replica confirmation of writes. Production code outside the store never imports
 * this entry (`.ci/check-store-boundary`).
 */
export { command as unsafeCommand } from "./RawDoor.js"
export type { Redis as RawClient } from "iovalkey"
