import type { Redis } from "iovalkey"
import { Context, Duration, Effect, Either, Layer, Runtime, Schedule, Scope } from "effect"
import { type KeyFamily, KeyPartError, type KeyParts, type KeySchema, makeKeySchema } from "@microdcs/keyschema"
import { type ScriptDescriptor, scriptKeys as keysOfCall } from "@microdcs/lua-scripts"
import { connectionOptions, createClient } from "./Connection.js"
import { keyProblem } from "./DocumentInput.js"
import { valkeyUrlProblem } from "./ValkeyUrl.js"
import { type ConnectionError, InvalidInput, StoreUnavailable } from "./Errors.js"
import { classifyFailure } from "./FailureKind.js"
import { defaults, type ValkeyOptions } from "./ValkeyOptions.js"
import { makeReplicaAck, replicaAckProblem } from "./ReplicaAck.js"
import { effectiveMinReplicasAck } from "./ReplicaAckDefault.js"
import { type HasRawDoor, rawDoor } from "./RawDoor.js"
import { confirmedScript, evalScript, type ReplyForm } from "./ScriptEval.js"
import { makeTickWrites } from "./TickWrites.js"

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

/** One call's result in {@link ValkeyService.scriptMany}: its reply, or how the call failed. */
export type ScriptResult<R> = { readonly _tag: "Reply"; readonly reply: R } | { readonly _tag: "Failed"; readonly error: ConnectionError }

export class Valkey extends Context.Tag("@microdcs/store/Valkey")<Valkey, ValkeyService>() {}

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
    Effect.catchAll(() => Effect.void),
    Effect.ensuring(Effect.sync(() => client.disconnect()))
  )

/** Opens one connection in the current scope, with an error listener that logs instead of crashing. */
const acquireConnection = (
  options: ValkeyOptions,
  name: string,
  overrides: { readonly commandTimeoutMs?: number | undefined } = {}
) =>
  Effect.gen(function* () {
    const runtime = yield* Effect.runtime<never>()
    const redisOptions = connectionOptions(options, { name, ...overrides })
    return yield* Effect.acquireRelease(
      Effect.suspend(() => {
        const client = createClient(redisOptions)
        let lastError: string | undefined
        // Without a listener, a connection error would be an unhandled 'error' event and kill the process.
        client.on("error", (error: Error) => {
          lastError = error.message
          Runtime.runFork(runtime)(Effect.logWarning("valkey connection error").pipe(Effect.annotateLogs({ connection: name, error: error.message })))
        })
        return connect(client, name, () => lastError)
      }),
      close
    )
  })

export const makeValkey = (options: ValkeyOptions): Effect.Effect<ValkeyService, StoreUnavailable | InvalidInput, Scope.Scope> =>
  Effect.gen(function* () {
    const keys = makeKeySchema(options.prefix ?? defaults.prefix)
    if (keys instanceof KeyPartError) return yield* new InvalidInput({ field: "prefix", message: keys.message })
    const urlProblem = options.url === undefined ? undefined : valkeyUrlProblem(options.url)
    if (urlProblem) return yield* new InvalidInput({ field: "url", message: `the Valkey URL ${urlProblem}` })
    const ackProblem = replicaAckProblem(options)
    if (ackProblem) return yield* ackProblem
    const minReplicasAck = yield* effectiveMinReplicasAck(options)
    const client = yield* acquireConnection(options, options.connectionName ?? "microdcs")
    // Backoff for commands that were never sent: 25 ms doubling, capped at 1 s, with jitter.
    const retryUnsent = Schedule.exponential(Duration.millis(25), 2).pipe(
      Schedule.modifyDelay((_, delay) => Duration.min(delay, Duration.seconds(1))),
      Schedule.jittered,
      Schedule.intersect(Schedule.recurs(options.unavailableRetries ?? defaults.unavailableRetries))
    )

    // With many fibers in flight (or a batch), the commands issued in one tick leave in one socket write.
    const gatherWrites = makeTickWrites(client)

    const replicaAck = minReplicasAck > 0 ? makeReplicaAck(minReplicasAck, options.replicaAckTimeoutMs ?? defaults.replicaAckTimeoutMs) : undefined

    /**
     * One attempt: resumes with the reply, or with the classified failure (a bug dies). An
     * attempt that was never sent resumes with `unsent()` when given: the retries come from
     * here, so the success path (nearly every call) is this one async step and nothing around it.
     */
    const attempt = <A>(
      operation: string,
      run: (client: Redis) => Promise<A>,
      unsent?: () => Effect.Effect<A, ConnectionError>
    ): Effect.Effect<A, ConnectionError> =>
      Effect.async<A, ConnectionError>((resume) => {
        if (client.status !== "ready") {
          resume(unsent ? unsent() : Effect.fail(new StoreUnavailable({ operation, message: `connection is ${client.status}` })))
          return
        }
        gatherWrites()
        run(client).then(
          (value) => resume(Effect.succeed(value)),
          (error) => {
            const failure = classifyFailure(operation, error)
            // A write may have landed on the primary alone: later replies must be confirmed.
            if (failure?._tag === "UnknownOutcome") replicaAck?.doubt()
            if (failure?._tag === "StoreUnavailable" && unsent) resume(unsent())
            else resume(failure ? Effect.fail(failure) : Effect.die(error))
          }
        )
      })

    // The retry schedule is only built once an attempt failed as never sent.
    const unconfirmed = <A>(operation: string, run: (client: Redis) => Promise<A>): Effect.Effect<A, ConnectionError> =>
      attempt(operation, run, () => attempt(operation, run).pipe(Effect.retry({ schedule: retryUnsent, while: (e) => e._tag === "StoreUnavailable" })))

    const durable = <A>(operation: string, run: (client: Redis) => Promise<A>): Effect.Effect<A, ConnectionError> =>
      replicaAck === undefined
        ? unconfirmed(operation, run)
        : unconfirmed(operation, (c) => replicaAck.send(c, run)).pipe(Effect.flatMap((reply) => replicaAck.settle(operation, reply)))

    const command = <A>(operation: string, run: (client: Redis) => Promise<A>): Effect.Effect<A, ConnectionError> =>
      replicaAck === undefined ? unconfirmed(operation, run) : Effect.suspend(() => (replicaAck.inDoubt() ? durable(operation, run) : unconfirmed(operation, run)))

    // The keys and arguments are built inside the attempt: no step of its own, and one array
    // each (iovalkey flattens the call's arguments into its own).
    const runScript = <K extends string, A, R>(
      descriptor: ScriptDescriptor<K, A, R>,
      scriptKeys: Readonly<Record<K, string>>,
      args: A,
      form: ReplyForm
    ): Effect.Effect<R, ConnectionError> => {
      if (replicaAck === undefined) {
        return unconfirmed(descriptor.name, (c) => evalScript(c, descriptor, keysOfCall(descriptor, scriptKeys, args), descriptor.encodeArgs(args), form)).pipe(
          Effect.map(descriptor.decodeReply)
        )
      }
      return unconfirmed(descriptor.name, (c) => confirmedScript(replicaAck, c, descriptor, keysOfCall(descriptor, scriptKeys, args), descriptor.encodeArgs(args), form)).pipe(
        Effect.flatMap((reply) => replicaAck.settle(descriptor.name, reply)),
        Effect.map(descriptor.decodeReply)
      )
    }

    const scriptMany = <K extends string, A, R>(
      descriptor: ScriptDescriptor<K, A, R>,
      calls: ReadonlyArray<{ readonly keys: Readonly<Record<K, string>>; readonly args: A }>
    ): Effect.Effect<ReadonlyArray<ScriptResult<R>>> =>
      Effect.async<ReadonlyArray<ScriptResult<R>>>((resume) => {
        const operation = descriptor.name
        if (client.status !== "ready") {
          const error = new StoreUnavailable({ operation, message: `connection is ${client.status}` })
          resume(Effect.succeed(calls.map((): ScriptResult<R> => ({ _tag: "Failed", error }))))
          return
        }
        if (calls.length === 0) return resume(Effect.succeed([]))
        // One callback pair per call and a count, no promise per result: the batch resumes once,
        // when its last reply is in. Any server error but a connection one is a bug, as in
        // `script`: the whole batch dies with it (after every call settled).
        const results = new Array<ScriptResult<R>>(calls.length)
        let waiting = calls.length
        let defect: { readonly cause: unknown } | undefined
        const settled = () => {
          if (--waiting === 0) resume(defect === undefined ? Effect.succeed(results) : Effect.die(defect.cause))
        }
        const reply = (j: number, raw: unknown) => {
          try {
            results[j] = { _tag: "Reply", reply: descriptor.decodeReply(raw) }
          } catch (cause) {
            defect ??= { cause }
          }
          settled()
        }
        const failed = (j: number, error: unknown) => {
          const failure = classifyFailure(operation, error)
          if (failure?._tag === "UnknownOutcome") replicaAck?.doubt()
          if (failure === undefined) defect ??= { cause: error }
          else results[j] = { _tag: "Failed", error: failure }
          settled()
        }
        // Every call is issued before the first reply can arrive, so they leave in one write.
        gatherWrites(calls.length > 1)
        for (let j = 0; j < calls.length; j++) {
          const { keys: scriptKeys, args } = calls[j]!
          const callKeys = keysOfCall(descriptor, scriptKeys, args)
          const argv = descriptor.encodeArgs(args)
          if (replicaAck === undefined) {
            evalScript(client, descriptor, callKeys, argv).then(
              (raw) => reply(j, raw),
              (error: unknown) => failed(j, error)
            )
            continue
          }
          confirmedScript(replicaAck, client, descriptor, callKeys, argv).then(
            (confirmed) => {
              const checked = Effect.runSync(Effect.either(replicaAck.settle(operation, confirmed)))
              if (Either.isRight(checked)) return reply(j, checked.right)
              results[j] = { _tag: "Failed", error: checked.left }
              settled()
            },
            (error: unknown) => failed(j, error)
          )
        }
      })

    const key = <F extends KeyFamily>(family: F, parts: KeyParts<F>): Effect.Effect<string, InvalidInput> => {
      const built = keys.key(family, parts)
      return built instanceof KeyPartError ? Effect.fail(keyProblem(built)) : Effect.succeed(built)
    }

    const dedicated = (name: string, overrides?: { readonly commandTimeoutMs?: number | undefined }) =>
      acquireConnection(options, name, overrides)

    return {
      options,
      keys,
      maxDocumentBytes: options.maxDocumentBytes ?? defaults.maxDocumentBytes,
      minReplicasAck,
      key,
      script: (descriptor, scriptKeys, args) => runScript(descriptor, scriptKeys, args, "text"),
      scriptWithBytes: (descriptor, scriptKeys, args) => runScript(descriptor, scriptKeys, args, "bytes"),
      scriptMany,
      [rawDoor]: { command, dedicated }
    } satisfies ValkeyService
  })

/** The Valkey service for the given options; connections close when the layer is released. */
export const layer = (options: ValkeyOptions): Layer.Layer<Valkey, StoreUnavailable | InvalidInput> =>
  Layer.scoped(Valkey, makeValkey(options))
