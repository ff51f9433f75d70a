import { randomBytes } from "node:crypto"

/** A random key prefix, so test files can share one server without seeing each other's keys. */
export const randomPrefix = (label = "t"): string => `${label}-${randomBytes(6).toString("hex")}`
