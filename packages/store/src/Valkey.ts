import type { Redis } from "iovalkey"
import { Context, Duration, Effect, Layer, type Scope } from "effect"
import { type KeyFamily, KeyPartError, type KeyParts, type KeySchema, makeKeySchema } from "@microdcs/keyschema"
import type { ScriptDescriptor } from "@microdcs/lua-scripts"
import { connectionOptions, createClient } from "./Connection.js"
import { keyProblem } from "./DocumentInput.js"
import { valkeyUrlProblem } from "./ValkeyUrl.js"
import { type ConnectionError, InvalidInput, StoreUnavailable } from "./Errors.js"
import { defaults, type ValkeyOptions } from "./ValkeyOptions.js"
import { replicaAckProblem } from "./ReplicaAck.js"
import { effectiveMinReplicasAck } from "./ReplicaAckDefault.js"
import { type HasRawDoor, rawDoor } from "./RawDoor.js"
import { type ScriptResult, scriptMany } from "./ScriptMany.js"
import { command, runScript, sharedConnection } from "./SharedConnection.js"

/**
 * The one door to an island's Valkey. DAOs never hold a client of their own: they go through
 * this service, which classifies every failure into the store's typed errors and retries what
 * was never sent. The raw client stays behind {@link rawDoor}: the store's own modules reach it,
 * and `@microdcs/store/unsafe` lends it on purpose (`unsafeCommand`).
 */
export interface ValkeyService extends HasRawDoor {
  readonly options: ValkeyOptions
  readonly keys: KeySchema
  readonly maxDocumentBytes: number
  /** The replicas each write waits for (`WAIT`), as decided when the layer was built: `options.minReplicasAck`, or its default. */
  readonly minReplicasAck: number
  /** Builds a key; a bad part is `InvalidInput` naming the part. */
  readonly key: <F extends KeyFamily>(family: F, parts: KeyParts<F>) => Effect.Effect<string, InvalidInput>
  /**
   * Runs a script by SHA, falling back to its source after NOSCRIPT (restart, failover, SCRIPT
   * FLUSH). Scripts are the store's writes: with `minReplicasAck` each is confirmed as `durable` is.
   */
  readonly script: <K extends string, A, R>(
    script: ScriptDescriptor<K, A, R>,
    keys: Readonly<Record<K, string>>,
    args: A
  ) => Effect.Effect<R, ConnectionError>
  /**
   * `script` for a script whose reply carries binary values (encoded entries, compressed
   * bytes): every bulk string of the reply reaches `decodeReply` as a `Buffer`, as sent, where
   * `script` decodes it as UTF-8 text (which mangles bytes that are not UTF-8).
   */
  readonly scriptWithBytes: <K extends string, A, R>(
    script: ScriptDescriptor<K, A, R>,
    keys: Readonly<Record<K, string>>,
    args: A
  ) => Effect.Effect<R, ConnectionError>
  /**
   * Runs one script for many calls at once: every call is written to the socket in the same
   * step (one pipeline, no fiber per call) and each gets its own result, in order: the reply,
   * or the call's `ConnectionError`. Nothing is retried here: a `StoreUnavailable` call was
   * never sent and may be sent again, an `UnknownOutcome` one needs its op check (as `script`'s
   * callers do). With `minReplicasAck` the batch shares one `WAIT`.
   */
  readonly scriptMany: <K extends string, A, R>(
    script: ScriptDescriptor<K, A, R>,
    calls: ReadonlyArray<{ readonly keys: Readonly<Record<K, string>>; readonly args: A }>
  ) => Effect.Effect<ReadonlyArray<ScriptResult<R>>>
}

export type { ScriptResult } from "./ScriptMany.js"

export class Valkey extends Context.Service<Valkey, ValkeyService>()("@microdcs/store/Valkey") {}

/**
 * `lastError` is the connection's last 'error' event: a refused AUTH (WRONGPASS, NOAUTH) ends
 * `connect()` with only "Connection is closed.", and the caller must learn why.
 */
const connect = (client: Redis, name: string, lastError: () => string | undefined): Effect.Effect<Redis, StoreUnavailable> =>
  Effect.tryPromise({
    try: () => client.connect().then(() => client),
    catch: (error) => {
      client.disconnect()
      const message = error instanceof Error ? error.message : String(error)
      const why = lastError()
      return new StoreUnavailable({ operation: `connect ${name}`, message: why !== undefined && why !== message ? `${message} (${why})` : message })
    }
  })

const close = (client: Redis): Effect.Effect<void> =>
  Effect.promise(() => client.quit().catch(() => undefined)).pipe(
    Effect.timeout(Duration.seconds(2)),
    Effect.catch(() => Effect.void),
    Effect.ensuring(Effect.sync(() => client.disconnect()))
  )

/** Opens one connection in the current scope, with an error listener that logs instead of crashing. */
const acquireConnection = (
  options: ValkeyOptions,
  name: string,
  overrides: { readonly commandTimeoutMs?: number | undefined } = {}
) =>
  Effect.gen(function* () {
    const runtime = yield* Effect.context<never>()
    const redisOptions = connectionOptions(options, { name, ...overrides })
    return yield* Effect.acquireRelease(
      Effect.suspend(() => {
        const client = createClient(redisOptions)
        let lastError: string | undefined
        // Without a listener, a connection error would be an unhandled 'error' event and kill the process.
        client.on("error", (error: Error) => {
          lastError = error.message
          Effect.runForkWith(runtime)(Effect.logWarning("valkey connection error").pipe(Effect.annotateLogs({ connection: name, error: error.message })))
        })
        return connect(client, name, () => lastError)
      }),
      close
    )
  })

/** The key schema of `options`, or the first problem of its prefix, URL or replica settings. */
const checkedOptions = (options: ValkeyOptions): Effect.Effect<KeySchema, InvalidInput> =>
  Effect.gen(function* () {
    const keys = makeKeySchema(options.prefix ?? defaults.prefix)
    if (keys instanceof KeyPartError) return yield* new InvalidInput({ field: "prefix", message: keys.message })
    const urlProblem = options.url === undefined ? undefined : valkeyUrlProblem(options.url)
    if (urlProblem) return yield* new InvalidInput({ field: "url", message: `the Valkey URL ${urlProblem}` })
    const ackProblem = replicaAckProblem(options)
    if (ackProblem) return yield* ackProblem
    return keys
  })

const buildKey = <F extends KeyFamily>(keys: KeySchema, family: F, parts: KeyParts<F>): Effect.Effect<string, InvalidInput> => {
  const built = keys.key(family, parts)
  return built instanceof KeyPartError ? Effect.fail(keyProblem(built)) : Effect.succeed(built)
}

export const makeValkey = (options: ValkeyOptions): Effect.Effect<ValkeyService, StoreUnavailable | InvalidInput, Scope.Scope> =>
  Effect.gen(function* () {
    const keys = yield* checkedOptions(options)
    const minReplicasAck = yield* effectiveMinReplicasAck(options)
    const client = yield* acquireConnection(options, options.connectionName ?? "microdcs")
    const shared = sharedConnection(client, options, minReplicasAck)
    return {
      options,
      keys,
      maxDocumentBytes: options.maxDocumentBytes ?? defaults.maxDocumentBytes,
      minReplicasAck,
      key: (family, parts) => buildKey(keys, family, parts),
      script: (descriptor, scriptKeys, args) => runScript(shared, descriptor, scriptKeys, args, "text"),
      scriptWithBytes: (descriptor, scriptKeys, args) => runScript(shared, descriptor, scriptKeys, args, "bytes"),
      scriptMany: (descriptor, calls) => scriptMany(shared, descriptor, calls),
      [rawDoor]: {
        command: (operation, run) => command(shared, operation, run),
        dedicated: (name, overrides) => acquireConnection(options, name, overrides)
      }
    } satisfies ValkeyService
  })

/** The Valkey service for the given options; connections close when the layer is released. */
export const layer = (options: ValkeyOptions): Layer.Layer<Valkey, StoreUnavailable | InvalidInput> =>
  Layer.effect(Valkey, makeValkey(options))
