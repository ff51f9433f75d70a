import { Effect } from "effect"
import { JobStates } from "@microdcs/job-state"
import { ScopeFiguresReader, ScopeRegistry } from "@microdcs/store"

/**
 * The Valkey-side figures of `/metrics`, read from index and stream sizes only (the store's
 * `ScopeFiguresReader`): no document is read, so a scrape costs the same on a scope with 20
 * job orders as on one with 20,000.
 */

export type { GroupFigures, ScopeFigures } from "@microdcs/store"

const STATES = Object.keys(JobStates)

/** Every scope's figures; the reader is built over `Valkey` here, so callers need only `Valkey` and `ScopeRegistry`. */
export const readStoreFigures = Effect.gen(function* () {
  const scopes = yield* Effect.flatMap(ScopeRegistry, (r) => r.list)
  return yield* Effect.flatMap(ScopeFiguresReader, (reader) => reader.figures(scopes, STATES))
}).pipe(Effect.provide(ScopeFiguresReader.Default))
