import type { Redis } from "iovalkey"
import { Duration, Effect, Schedule } from "effect"
import { type ScriptDescriptor, scriptKeys as keysOfCall } from "@microdcs/lua-scripts"
import { type ConnectionError, StoreUnavailable } from "./Errors.js"
import { classifyFailure } from "./FailureKind.js"
import { makeReplicaAck, type ReplicaAck } from "./ReplicaAck.js"
import { confirmedScript, evalScript, type ReplyForm } from "./ScriptEval.js"
import { makeTickWrites } from "./TickWrites.js"
import { defaults, type ValkeyOptions } from "./ValkeyOptions.js"

/** Backoff for commands that were never sent: 25 ms doubling, capped at 1 s, with jitter. */
const retryUnsentOf = (options: ValkeyOptions) =>
  Schedule.max([
    Schedule.exponential(Duration.millis(25), 2).pipe(
      Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, Duration.seconds(1)))),
      Schedule.jittered
    ),
    Schedule.recurs(options.unavailableRetries ?? defaults.unavailableRetries)
  ])

/** What every call on the `Valkey` service's shared connection needs, built once per layer. */
export interface SharedConnection {
  readonly client: Redis
  /** Puts the commands issued in one tick into one socket write. */
  readonly gatherWrites: (many?: boolean) => void
  /** With `minReplicasAck`, the WAIT that confirms writes; `undefined` without. */
  readonly replicaAck: ReplicaAck | undefined
  readonly retryUnsent: ReturnType<typeof retryUnsentOf>
}

export const sharedConnection = (client: Redis, options: ValkeyOptions, minReplicasAck: number): SharedConnection => ({
  client,
  // With many fibers in flight (or a batch), the commands issued in one tick leave in one socket write.
  gatherWrites: makeTickWrites(client),
  replicaAck: minReplicasAck > 0 ? makeReplicaAck(minReplicasAck, options.replicaAckTimeoutMs ?? defaults.replicaAckTimeoutMs) : undefined,
  retryUnsent: retryUnsentOf(options)
})

/**
 * One attempt: resumes with the reply, or with the classified failure (a bug dies). An
 * attempt that was never sent resumes with `unsent()` when given: the retries come from
 * here, so the success path (nearly every call) is this one async step and nothing around it.
 */
const attempt = <A>(
  shared: SharedConnection,
  operation: string,
  run: (client: Redis) => Promise<A>,
  unsent?: () => Effect.Effect<A, ConnectionError>
): Effect.Effect<A, ConnectionError> =>
  Effect.callback<A, ConnectionError>((resume) => {
    const { client } = shared
    if (client.status !== "ready") {
      resume(unsent ? unsent() : Effect.fail(new StoreUnavailable({ operation, message: `connection is ${client.status}` })))
      return
    }
    shared.gatherWrites()
    run(client).then(
      (value) => resume(Effect.succeed(value)),
      (error) => {
        const failure = classifyFailure(operation, error)
        // A write may have landed on the primary alone: later replies must be confirmed.
        if (failure?._tag === "UnknownOutcome") shared.replicaAck?.doubt()
        if (failure?._tag === "StoreUnavailable" && unsent) resume(unsent())
        else resume(failure ? Effect.fail(failure) : Effect.die(error))
      }
    )
  })

// The retry schedule is only built once an attempt failed as never sent.
const unconfirmed = <A>(shared: SharedConnection, operation: string, run: (client: Redis) => Promise<A>): Effect.Effect<A, ConnectionError> =>
  attempt(shared, operation, run, () =>
    attempt(shared, operation, run).pipe(Effect.retry({ schedule: shared.retryUnsent, while: (e) => e._tag === "StoreUnavailable" }))
  )

const durable = <A>(shared: SharedConnection, replicaAck: ReplicaAck, operation: string, run: (client: Redis) => Promise<A>): Effect.Effect<A, ConnectionError> =>
  unconfirmed(shared, operation, (c) => replicaAck.send(c, run)).pipe(Effect.flatMap((reply) => replicaAck.settle(operation, reply)))

/** A raw command on the shared connection (the raw door's `command`): confirmed by the replicas only while in doubt. */
export const command = <A>(shared: SharedConnection, operation: string, run: (client: Redis) => Promise<A>): Effect.Effect<A, ConnectionError> => {
  const { replicaAck } = shared
  return replicaAck === undefined
    ? unconfirmed(shared, operation, run)
    : Effect.suspend(() => (replicaAck.inDoubt() ? durable(shared, replicaAck, operation, run) : unconfirmed(shared, operation, run)))
}

// The keys and arguments are built inside the attempt: no step of its own, and one array
// each (iovalkey flattens the call's arguments into its own).
export const runScript = <K extends string, A, R>(
  shared: SharedConnection,
  descriptor: ScriptDescriptor<K, A, R>,
  scriptKeys: Readonly<Record<K, string>>,
  args: A,
  form: ReplyForm
): Effect.Effect<R, ConnectionError> => {
  const { replicaAck } = shared
  if (replicaAck === undefined) {
    return unconfirmed(shared, descriptor.name, (c) => evalScript(c, descriptor, keysOfCall(descriptor, scriptKeys, args), descriptor.encodeArgs(args), form)).pipe(
      Effect.map(descriptor.decodeReply)
    )
  }
  return unconfirmed(shared, descriptor.name, (c) => confirmedScript(replicaAck, c, descriptor, keysOfCall(descriptor, scriptKeys, args), descriptor.encodeArgs(args), form)).pipe(
    Effect.flatMap((reply) => replicaAck.settle(descriptor.name, reply)),
    Effect.map(descriptor.decodeReply)
  )
}
