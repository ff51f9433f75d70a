import { Effect, Layer, Option } from "effect"
import { StoreUnavailable, storeLayer, type ValkeyOptions, valkeyOptionsConfig } from "@microdcs/store"
import { UsageError } from "./ExitCode.js"
import { Output } from "./Output.js"
import { root } from "./Root.js"

const protocolOf = (url: string): string => {
  try {
    return new URL(url).protocol
  } catch {
    return ""
  }
}

/**
 * The connection options: the `VALKEY_*` environment (validated by the store's config, so a
 * bad variable is named), overridden by `--url` and `--prefix`. An explicit `--url` also wins
 * over `VALKEY_SENTINELS`: what the operator typed is what they mean.
 */
export const connectionOptions = Effect.gen(function* () {
  const flags = yield* root
  const env = yield* valkeyOptionsConfig
  const url = Option.getOrUndefined(flags.url) ?? env.url
  // The client would throw on a malformed URL; here it is the usage error it is.
  if (url !== undefined && !/^rediss?:$/.test(protocolOf(url))) {
    return yield* new UsageError({ message: `not a redis:// or rediss:// URL: ${Option.isSome(flags.url) ? "--url" : "VALKEY_URL"}` })
  }
  return {
    ...env,
    ...(Option.isSome(flags.url) ? { url: flags.url.value, sentinels: undefined } : {}),
    ...(Option.isSome(flags.prefix) ? { prefix: flags.prefix.value } : {}),
    connectionName: "microdcs-admin"
  } satisfies ValkeyOptions
})

/** Where the CLI connects, for error messages: host and port only, never credentials. */
export const describeTarget = (options: ValkeyOptions): string => {
  if (options.sentinels && options.sentinels.length > 0) {
    return `sentinels ${options.sentinels.map((s) => `${s.host}:${s.port}`).join(",")} (${options.sentinelName ?? "mymaster"})`
  }
  try {
    const url = new URL(options.url ?? "redis://127.0.0.1:6379")
    return `${url.hostname}:${url.port || "6379"}${url.pathname.length > 1 ? url.pathname : ""}`
  } catch {
    return "an unparsable URL"
  }
}

/** Runs a command body that needs only the output mode (a check of a local file). */
export const local = <A, E, R>(body: Effect.Effect<A, E, R>) =>
  Effect.flatMap(root, (flags) => Effect.provideService(body, Output, { json: flags.json }))

/**
 * Runs a command body against the island: the whole store (every DAO) over one connection for
 * the whole command, closed when it ends. A refused connection is `StoreUnavailable` (exit 4), a bad prefix `InvalidInput` (exit 2).
 */
export const island = <A, E, R>(body: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const flags = yield* root
    const options = yield* connectionOptions
    const layer = Layer.merge(storeLayer(options), Layer.succeed(Output, { json: flags.json }))
    // The store's message says what failed ("Connection is closed."); the operator also needs where.
    return yield* Effect.provide(body, layer).pipe(
      Effect.mapError((e) =>
        e instanceof StoreUnavailable
          ? new StoreUnavailable({ operation: e.operation, message: `Valkey at ${describeTarget(options)} is unavailable: ${e.message}` })
          : e
      )
    )
  })
