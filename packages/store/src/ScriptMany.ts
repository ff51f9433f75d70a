import type { Redis } from "iovalkey"
import { Effect, Result } from "effect"
import { type ScriptDescriptor, scriptKeys as keysOfCall } from "@microdcs/lua-scripts"
import { type ConnectionError, StoreUnavailable } from "./Errors.js"
import { classifyFailure } from "./FailureKind.js"
import type { Confirmed, ReplicaAck } from "./ReplicaAck.js"
import { confirmedScript, evalScript } from "./ScriptEval.js"
import type { SharedConnection } from "./SharedConnection.js"

/** One call's result in `ValkeyService.scriptMany`: its reply, or how the call failed. */
export type ScriptResult<R> = { readonly _tag: "Reply"; readonly reply: R } | { readonly _tag: "Failed"; readonly error: ConnectionError }

/**
 * A batch in flight: one callback pair per call and a count, no promise per result, so the
 * batch resumes once, when its last reply is in. Any server error but a connection one is a
 * bug, as in `script`: the whole batch dies with it (after every call settled).
 */
interface ScriptBatch<R> {
  readonly descriptor: { readonly name: string; readonly decodeReply: (raw: unknown) => R }
  readonly replicaAck: ReplicaAck | undefined
  readonly resume: (result: Effect.Effect<ReadonlyArray<ScriptResult<R>>>) => void
  readonly results: Array<ScriptResult<R>>
  waiting: number
  defect: { readonly cause: unknown } | undefined
}

const settled = <R>(batch: ScriptBatch<R>): void => {
  if (--batch.waiting === 0) batch.resume(batch.defect === undefined ? Effect.succeed(batch.results) : Effect.die(batch.defect.cause))
}

const replied = <R>(batch: ScriptBatch<R>, j: number, raw: unknown): void => {
  try {
    batch.results[j] = { _tag: "Reply", reply: batch.descriptor.decodeReply(raw) }
  } catch (cause) {
    batch.defect ??= { cause }
  }
  settled(batch)
}

const failed = <R>(batch: ScriptBatch<R>, j: number, error: unknown): void => {
  const failure = classifyFailure(batch.descriptor.name, error)
  if (failure?._tag === "UnknownOutcome") batch.replicaAck?.doubt()
  if (failure === undefined) batch.defect ??= { cause: error }
  else batch.results[j] = { _tag: "Failed", error: failure }
  settled(batch)
}

const confirmedReply = <R>(batch: ScriptBatch<R>, replicaAck: ReplicaAck, j: number, confirmed: Confirmed<unknown>): void => {
  const checked = Effect.runSync(Effect.result(replicaAck.settle(batch.descriptor.name, confirmed)))
  if (Result.isSuccess(checked)) return replied(batch, j, checked.success)
  batch.results[j] = { _tag: "Failed", error: checked.failure }
  settled(batch)
}

/** Issues call `j` of the batch; its reply or failure lands in the batch. */
const send = <K extends string, A, R>(
  client: Redis,
  descriptor: ScriptDescriptor<K, A, R>,
  batch: ScriptBatch<R>,
  j: number,
  call: { readonly keys: Readonly<Record<K, string>>; readonly args: A }
): void => {
  const callKeys = keysOfCall(descriptor, call.keys, call.args)
  const argv = descriptor.encodeArgs(call.args)
  const { replicaAck } = batch
  if (replicaAck === undefined) {
    evalScript(client, descriptor, callKeys, argv).then(
      (raw) => replied(batch, j, raw),
      (error: unknown) => failed(batch, j, error)
    )
    return
  }
  confirmedScript(replicaAck, client, descriptor, callKeys, argv).then(
    (confirmed) => confirmedReply(batch, replicaAck, j, confirmed),
    (error: unknown) => failed(batch, j, error)
  )
}

/** `ValkeyService.scriptMany`: every call written to the socket in one step, each with its own result. */
export const scriptMany = <K extends string, A, R>(
  shared: SharedConnection,
  descriptor: ScriptDescriptor<K, A, R>,
  calls: ReadonlyArray<{ readonly keys: Readonly<Record<K, string>>; readonly args: A }>
): Effect.Effect<ReadonlyArray<ScriptResult<R>>> =>
  Effect.callback<ReadonlyArray<ScriptResult<R>>>((resume) => {
    const { client } = shared
    if (client.status !== "ready") {
      const error = new StoreUnavailable({ operation: descriptor.name, message: `connection is ${client.status}` })
      resume(Effect.succeed(calls.map((): ScriptResult<R> => ({ _tag: "Failed", error }))))
      return
    }
    if (calls.length === 0) return resume(Effect.succeed([]))
    const batch: ScriptBatch<R> = { descriptor, replicaAck: shared.replicaAck, resume, results: new Array<ScriptResult<R>>(calls.length), waiting: calls.length, defect: undefined }
    // Every call is issued before the first reply can arrive, so they leave in one write.
    shared.gatherWrites(calls.length > 1)
    for (let j = 0; j < calls.length; j++) send(client, descriptor, batch, j, calls[j]!)
  })
