import type { Redis } from "iovalkey"
import type { Effect, Scope } from "effect"
import type { ConnectionError, StoreUnavailable } from "./Errors.js"

/**
 * The raw client behind a `ValkeyService`: commands on the shared connection and connections of
 * their own. Kept under a symbol that only the store's modules use, so the main entry offers no
 * way to the raw client: the store's services use it, and `@microdcs/store/unsafe` lends it
 * (`unsafeCommand`) to whoever imports that entry on purpose. A registered symbol (as Effect's
 * tags are global keys): an extension bundled with a copy of the store reaches the door of the
 * service the island hands it.
 */
export const rawDoor: unique symbol = Symbol.for("@microdcs/store/rawDoor")

export interface RawDoor {
  /**
   * Runs commands on the shared connection. What was never sent is retried with backoff. With
   * `minReplicasAck`, after an `UnknownOutcome` its replies are confirmed as `durable` ones are,
   * until the replicas caught up: an outcome check never calls a write landed that they lack.
   * A write made here is not confirmed by the replicas: the store's writes are scripts.
   */
  readonly command: <A>(operation: string, run: (client: Redis) => Promise<A>) => Effect.Effect<A, ConnectionError>
  /** A connection of its own for blocking reads or pub/sub, closed with the scope. */
  readonly dedicated: (
    name: string,
    options?: { readonly commandTimeoutMs?: number | undefined }
  ) => Effect.Effect<Redis, StoreUnavailable, Scope.Scope>
}

/** What carries the door: every `ValkeyService`. */
export interface HasRawDoor {
  readonly [rawDoor]: RawDoor
}

/** {@link RawDoor.command} of `valkey`. */
export const command = <A>(valkey: HasRawDoor, operation: string, run: (client: Redis) => Promise<A>): Effect.Effect<A, ConnectionError> =>
  valkey[rawDoor].command(operation, run)

/** {@link RawDoor.dedicated} of `valkey`. */
export const dedicated = (
  valkey: HasRawDoor,
  name: string,
  options?: { readonly commandTimeoutMs?: number | undefined }
): Effect.Effect<Redis, StoreUnavailable, Scope.Scope> => valkey[rawDoor].dedicated(name, options)

/**
 * `valkey` with its raw commands run through `around` (a test counts or delays them); scripts and
 * the other calls are untouched. A test seam, exported from `@microdcs/store/testing`.
 */
export const interceptCommands = <T extends HasRawDoor>(
  valkey: T,
  around: <A>(operation: string, command: Effect.Effect<A, ConnectionError>) => Effect.Effect<A, ConnectionError>
): T => {
  const door = valkey[rawDoor]
  return { ...valkey, [rawDoor]: { ...door, command: (operation, run) => around(operation, door.command(operation, run)) } satisfies RawDoor }
}
