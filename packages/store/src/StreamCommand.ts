import type { Redis } from "iovalkey"
import { Effect } from "effect"
import { type ConnectionError, StoreUnavailable } from "./Errors.js"
import { classifyFailure, isReplyError } from "./FailureKind.js"

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
          Effect.catchAll((error) => {
            const failure = classifyFailure(operation, error)
            return failure ? Effect.fail(failure) : Effect.die(error)
          })
        )
      : Effect.fail(new StoreUnavailable({ operation, message: `connection is ${client.status}` }))
  )
