import { Effect, Layer, Option } from "effect"
import {
  type ChangeStream,
  type DedupeStore,
  type IndexMaintenance,
  type JobAcceptanceDao,
  type JobOrderDao,
  type JobResponseDao,
  type PublisherCursors,
  type PublisherLease,
  type ReferenceListDao,
  type ScopeRegistry,
  type SfcStateDao,
  type StartLease,
  storeLayer,
  type Valkey,
  type ValkeyOptions,
  valkeyOptionsConfig,
  type ValkeyStreams,
  type WorkMasterDao
} from "@microdcs/store"
import { Output } from "./Output.js"
import { root } from "./Root.js"

/** Everything a command may use: the whole store over one connection, and the output mode. */
export type Island =
  | Valkey
  | JobOrderDao
  | JobResponseDao
  | WorkMasterDao
  | ReferenceListDao
  | JobAcceptanceDao
  | DedupeStore
  | StartLease
  | PublisherLease
  | ScopeRegistry
  | ChangeStream
  | PublisherCursors
  | SfcStateDao
  | ValkeyStreams
  | IndexMaintenance
  | Output

/**
 * The connection options: the `VALKEY_*` environment (validated by the store's config, so a
 * bad variable is named), overridden by `--url` and `--prefix`. An explicit `--url` also wins
 * over `VALKEY_SENTINELS`: what the operator typed is what they mean.
 */
export const connectionOptions = Effect.gen(function* () {
  const flags = yield* root
  const env = yield* valkeyOptionsConfig
  return {
    ...env,
    ...(Option.isSome(flags.url) ? { url: flags.url.value, sentinels: undefined } : {}),
    ...(Option.isSome(flags.prefix) ? { prefix: flags.prefix.value } : {}),
    connectionName: "microdcs-admin"
  } satisfies ValkeyOptions
})

/** Runs a command body that needs only the output mode (a check of a local file). */
export const local = <A, E, R>(body: Effect.Effect<A, E, R>) =>
  Effect.flatMap(root, (flags) => Effect.provideService(body, Output, { json: flags.json }))

/**
 * Runs a command body against the island: one connection for the whole command, closed when it
 * ends. A refused connection is `StoreUnavailable` (exit 4), a bad prefix `InvalidInput` (exit 2).
 */
export const island = <A, E, R>(body: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const flags = yield* root
    const options = yield* connectionOptions
    const layer = Layer.merge(storeLayer(options), Layer.succeed(Output, { json: flags.json }))
    return yield* Effect.provide(body, layer)
  })
