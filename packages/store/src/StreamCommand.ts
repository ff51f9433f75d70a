import type { Redis } from "iovalkey"
import { Effect } from "effect"
import { type ConnectionError, NotFound, StoreUnavailable, WrongType } from "./Errors.js"
import { classifyFailure, isReplyError } from "./FailureKind.js"
import { command, type HasRawDoor } from "./RawDoor.js"

// How ValkeyStreams runs a command: the stream refusals a caller must handle (NOGROUP, WRONGTYPE,
// BUSYGROUP) become values; every other failure is classified exactly as in Valkey.command.

/** Server replies that are the caller's business rather than bugs. */
const expectedReply = /^(NOGROUP|WRONGTYPE|BUSYGROUP)\b/
export type Guarded<A> = { readonly ok: A } | { readonly refused: string }

export const guard =
  <A>(run: (c: Redis) => Promise<A>) =>
  (c: Redis): Promise<Guarded<A>> =>
    run(c).then(
      (ok) => ({ ok }),
      (error: unknown) => (isReplyError(error) && expectedReply.test(error.message) ? { refused: error.message } : Promise.reject(error))
    )

/** Runs on a dedicated connection, with the same failure classification as `Valkey.command` (no resend). */
export const onConnection = <A>(client: Redis, operation: string, run: (c: Redis) => Promise<A>): Effect.Effect<A, ConnectionError> =>
  Effect.suspend(() =>
    client.status === "ready"
      ? Effect.tryPromise({ try: () => run(client), catch: (error) => error }).pipe(
          Effect.catch((error) => {
            const failure = classifyFailure(operation, error)
            return failure ? Effect.fail(failure) : Effect.die(error)
          })
        )
      : Effect.fail(new StoreUnavailable({ operation, message: `connection is ${client.status}` }))
  )

/** One attempt of a stream command, on `connection` when given, else on the shared connection. */
export const streamAttempt = <A>(valkey: HasRawDoor, operation: string, run: (c: Redis) => Promise<A>, connection?: Redis) =>
  connection ? onConnection(connection, operation, guard(run)) : command(valkey, operation, guard(run))

/** Maps NOGROUP to NotFound and WRONGTYPE to WrongType naming the offending key. */
export const refused = (valkey: HasRawDoor, keys: ReadonlyArray<string>, message: string): Effect.Effect<never, NotFound | WrongType | ConnectionError> =>
  message.startsWith("NOGROUP")
    ? Effect.fail(new NotFound({ key: keys.join(" "), message }))
    : command(valkey, "stream key types", (c) => Promise.all(keys.map((k) => c.type(k)))).pipe(
        Effect.flatMap((types) => {
          const at = types.findIndex((t) => t !== "stream" && t !== "none")
          return Effect.fail(new WrongType({ key: keys[Math.max(at, 0)]!, expected: "stream", actual: types[at] ?? "unknown" }))
        })
      )

/** A stream command on `keys`: its reply, or the refusal as a typed error. */
export const runStream = <A>(valkey: HasRawDoor, operation: string, keys: ReadonlyArray<string>, fn: (c: Redis) => Promise<A>, connection?: Redis) =>
  streamAttempt(valkey, operation, fn, connection).pipe(Effect.flatMap((r) => ("ok" in r ? Effect.succeed(r.ok) : refused(valkey, keys, r.refused))))
