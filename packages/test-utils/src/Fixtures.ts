import { readFileSync } from "node:fs"

/**
 * The sample documents every test kit uses (a work master carrying the axle recipe, a job order that
 * references it). They live in this package so a clone on any machine has them; see fixtures/README.md.
 */
export const fixtureNames = ["work-master-axle.json", "job-order.json"] as const
export type FixtureName = (typeof fixtureNames)[number]

/** A fresh parsed copy of a fixture, so a test may change it freely. */
export const fixture = (name: FixtureName): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(`../fixtures/${name}`, import.meta.url), "utf8")) as Record<string, unknown>
