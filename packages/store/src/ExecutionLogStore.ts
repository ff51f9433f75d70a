import { Effect, Option, Context, Layer } from "effect"
import { encodeKeyPartUnchecked, KeyPartError, type KeySchema, MAX_NODE_SEQ, nodeSeqOf, nodeSeqPart } from "@microdcs/keyschema"
import { type ConnectionError, InvalidInput, WrongType } from "./Errors.js"
import { CheckedExecutions, CHUNK, chunks, executionPartOf, keyPartInvalid } from "./ExecutionLogKeyShape.js"
import { type ExecutionExtent, removeThenRead, retain as retainExecutions } from "./ExecutionLogRetention.js"
import { typedCommand } from "./TypeGuard.js"
import { Valkey, type ValkeyService } from "./Valkey.js"
import { command } from "./RawDoor.js"

/**
 * The poller kind of the storage role: the commit nudge is `nudge:{kind}`, its dead letters
 * `dlq:{kind}:{scope}`. A commit request publishes this nudge so the role reads it at once.
 */
export const EXECUTION_LOG_COMMIT_KIND = "dagcommit"

/** The field of a commit request that holds its keys, a JSON array of full keys. */
export const COMMIT_KEYS_FIELD = "keys"

/** A key of the execution log, told apart by the store: the execution record or one of its nodes. */
export type ExecutionLogKey =
  | { readonly kind: "exec"; readonly executionId: string }
  | { readonly kind: "node"; readonly executionId: string; readonly seq: number }

/**
 * One value of the log as stored: the full key and its bytes, never re-encoded. Text is written as
 * its UTF-8 bytes (the engine hands over its JSON text: one socket write per batch, no copy).
 */
export interface LogValue {
  readonly key: string
  readonly value: Uint8Array | string
}

export type { ExecutionExtent } from "./ExecutionLogRetention.js"

/** An execution to list in `dag:log:executions`, with its open time (epoch ms). */
type OpenedExecution = { readonly executionId: string; readonly openedAt: number }

/** One commit request: the scope whose stream gets it and the keys it hands over. */
export interface CommitRequest {
  readonly scope: string
  readonly keys: ReadonlyArray<string>
}

/** What the log's functions share, built once per store: the connection, the key schema, the list's key and the executions checked. */
interface ExecutionLogDeps {
  readonly valkey: ValkeyService
  readonly schema: KeySchema
  /** Every log key starts with this (`{prefix}:dag:log:`); a commit may name nothing else. */
  readonly logPrefix: string
  readonly executionsKey: string
  // Each execution's part is parsed once while it is written (its keys differ only in the suffix checked above).
  readonly checked: CheckedExecutions
}

const execKey = (deps: ExecutionLogDeps, executionId: string) => deps.valkey.key("executionLogExec", { executionId })

const nodeKey = (deps: ExecutionLogDeps, executionId: string, seq: number): Effect.Effect<string, InvalidInput> => {
  const part = nodeSeqPart(seq)
  return part instanceof KeyPartError ? Effect.fail(keyPartInvalid(part)) : deps.valkey.key("executionLogNode", { executionId, seq: part })
}

/** What a full key is in the log, or `undefined` for any other key (another family, prefix or shape). */
const parseKey = (deps: ExecutionLogDeps, key: string): ExecutionLogKey | undefined => {
  if (!key.startsWith(deps.logPrefix)) return undefined
  const parsed = deps.schema.parse(key)
  if (parsed?.family === "executionLogExec") return { kind: "exec", executionId: parsed.parts.executionId }
  if (parsed?.family === "executionLogNode") {
    const seq = nodeSeqOf(parsed.parts.seq)
    return seq === undefined ? undefined : { kind: "node", executionId: parsed.parts.executionId, seq }
  }
  return undefined
}

/** The MSET arguments of `values`, or `InvalidInput` for the first key that is no log key: one pass, so nothing is written unless all are. */
const msetArgs = (deps: ExecutionLogDeps, values: ReadonlyArray<LogValue>): Array<string | Buffer> | InvalidInput => {
  const args: Array<string | Buffer> = []
  for (const v of values) {
    const base = executionPartOf(v.key)
    if (base === undefined || (!deps.checked.has(base) && parseKey(deps, v.key) === undefined)) {
      return new InvalidInput({ field: "key", message: `'${v.key}' is no execution log key` })
    }
    deps.checked.add(base)
    args.push(v.key, typeof v.value === "string" ? v.value : Buffer.from(v.value.buffer, v.value.byteOffset, v.value.byteLength))
  }
  return args
}

/** One MSET per chunk and one ZADD NX per chunk of executions, in one MULTI. */
const writeInTransaction = (deps: ExecutionLogDeps, args: ReadonlyArray<string | Buffer>, executions: ReadonlyArray<OpenedExecution>) =>
  command(deps.valkey, "write execution log", async (c) => {
    const transaction = c.multi()
    for (let i = 0; i < args.length; i += 2 * CHUNK) transaction.mset(args.slice(i, i + 2 * CHUNK))
    for (const part of chunks(executions)) transaction.zadd(deps.executionsKey, "NX", ...part.flatMap((o) => [o.openedAt, o.executionId]))
    for (const [error] of (await transaction.exec()) ?? []) if (error) throw error
  })

/**
 * Writes log values and lists `executions` in `dag:log:executions` (score: open time in ms;
 * ZADD NX, so one listed before keeps its score). The caller lists every execution whose record
 * `values` hold: then a record is never outside the list, which retention walks (values and
 * list in one MULTI, so neither lands without the other). A key that is no exec or node key is
 * `InvalidInput`, nothing written.
 */
const write = (
  deps: ExecutionLogDeps,
  values: ReadonlyArray<LogValue>,
  executions: ReadonlyArray<OpenedExecution> = []
): Effect.Effect<void, InvalidInput | ConnectionError> =>
  Effect.gen(function* () {
    const args = msetArgs(deps, values)
    if (args instanceof InvalidInput) return yield* args
    const bad = executions.find((o) => !Number.isFinite(o.openedAt))
    if (bad) return yield* new InvalidInput({ field: "openedAt", message: `openedAt of ${bad.executionId} is not a finite number` })
    if (values.length === 0 && executions.length === 0) return
    // Nodes only (no record, nothing to list): one MSET, sent on its own.
    if (executions.length === 0 && values.length <= CHUNK) {
      yield* command(deps.valkey, "write execution log", (c) => c.mset(args))
      return
    }
    yield* writeInTransaction(deps, args, executions)
  })

/**
 * Appends a commit request (the keys, never the values) to `dag:commits:{scope}`, registers the
 * scope and nudges the storage role. The keys are not judged here: the storage role is the one
 * guard (a request with any key outside the log is refused there, whoever appended it).
 */
const commit = (deps: ExecutionLogDeps, scope: string, keys: ReadonlyArray<string>): Effect.Effect<string, InvalidInput | WrongType | ConnectionError> =>
  Effect.gen(function* () {
    const { valkey } = deps
    if (keys.length === 0) return yield* new InvalidInput({ field: "keys", message: "a commit request names at least one key" })
    const stream = yield* valkey.key("executionLogCommits", { scope })
    const scopes = yield* valkey.key("scopes", {})
    const channel = yield* valkey.key("nudge", { kind: EXECUTION_LOG_COMMIT_KIND })
    const replies = yield* command(valkey, "commit execution log", (c) =>
      c.multi().xadd(stream, "*", COMMIT_KEYS_FIELD, JSON.stringify(keys)).sadd(scopes, scope).publish(channel, scope).exec()
    )
    const [error, id] = replies?.[0] ?? [new Error("commit: no reply"), null]
    if (error?.message.startsWith("WRONGTYPE")) {
      const actual = yield* command(valkey, "type", (c) => c.type(stream))
      return yield* new WrongType({ key: stream, expected: "stream", actual })
    }
    if (error) return yield* Effect.die(error)
    return id as string
  })

/**
 * Appends several commit requests in one pipelined round trip (the engine's log writer hands
 * over every execution a batch closed): one XADD each, the scopes registered, one nudge per
 * scope. A request without keys is `InvalidInput` and nothing is appended.
 */
const commitAll = (deps: ExecutionLogDeps, requests: ReadonlyArray<CommitRequest>): Effect.Effect<void, InvalidInput | ConnectionError> =>
  Effect.gen(function* () {
    const { valkey } = deps
    if (requests.some((r) => r.keys.length === 0)) return yield* new InvalidInput({ field: "keys", message: "a commit request names at least one key" })
    if (requests.length === 0) return
    const streams = yield* Effect.forEach(requests, (r) => valkey.key("executionLogCommits", { scope: r.scope }))
    const scopesKey = yield* valkey.key("scopes", {})
    const channel = yield* valkey.key("nudge", { kind: EXECUTION_LOG_COMMIT_KIND })
    const scopes = [...new Set(requests.map((r) => r.scope))]
    yield* command(valkey, "commit execution logs", async (c) => {
      const pipeline = c.pipeline()
      requests.forEach((r, i) => pipeline.xadd(streams[i]!, "*", COMMIT_KEYS_FIELD, JSON.stringify(r.keys)))
      pipeline.sadd(scopesKey, ...scopes)
      for (const scope of scopes) pipeline.publish(channel, scope)
      for (const [error] of (await pipeline.exec()) ?? []) if (error) throw error
    })
  })

/** The bytes of each key, in order; `undefined` for a key that is gone (or holds no string). */
const readValues = (deps: ExecutionLogDeps, keys: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<Buffer | undefined>, ConnectionError> =>
  Effect.map(
    Effect.forEach(chunks(keys), (part) => command(deps.valkey, "read execution log", (c) => c.mgetBuffer(...part))),
    (parts) => parts.flat().map((v) => v ?? undefined)
  )

/** The execution record's bytes, or none. */
const readExec = (deps: ExecutionLogDeps, executionId: string): Effect.Effect<Option.Option<Buffer>, InvalidInput | WrongType | ConnectionError> =>
  Effect.gen(function* () {
    const key = yield* execKey(deps, executionId)
    return Option.fromNullishOr(yield* typedCommand(deps.valkey, "read execution", key, "string", (c) => c.getBuffer(key)))
  })

/** The nodes `from..to` (inclusive) of an execution that are in Valkey, in sequence order. */
const readNodes = (
  deps: ExecutionLogDeps,
  executionId: string,
  from: number,
  to: number
): Effect.Effect<ReadonlyArray<{ readonly seq: number; readonly key: string; readonly value: Buffer }>, InvalidInput | ConnectionError> =>
  Effect.gen(function* () {
    const first = Math.max(0, from)
    const last = Math.min(to, MAX_NODE_SEQ)
    const seqs: Array<number> = []
    for (let seq = first; seq <= last; seq++) seqs.push(seq)
    const keys = yield* Effect.forEach(seqs, (seq) => nodeKey(deps, executionId, seq))
    const values = yield* readValues(deps, keys)
    return seqs.flatMap((seq, i) => (values[i] === undefined ? [] : [{ seq, key: keys[i]!, value: values[i]! }]))
  })

/** The ids of the oldest executions beyond the newest `cap`, oldest first. */
const oldestBeyond = (deps: ExecutionLogDeps, cap: number): Effect.Effect<ReadonlyArray<string>, InvalidInput | WrongType | ConnectionError> =>
  Effect.gen(function* () {
    const { valkey, executionsKey } = deps
    if (!Number.isSafeInteger(cap) || cap < 0) return yield* new InvalidInput({ field: "cap", message: `cap ${cap} is not a whole number >= 0` })
    const count = yield* typedCommand(valkey, "count executions", executionsKey, "zset", (c) => c.zcard(executionsKey))
    if (count <= cap) return []
    return yield* command(valkey, "oldest executions", (c) => c.zrange(executionsKey, 0, count - cap - 1))
  })

/** The methods of the store over `deps`; retention works with the same record (the connection and the list's key). */
const executionLogMethods = (deps: ExecutionLogDeps) => ({
  logPrefix: deps.logPrefix,
  execKey: (executionId: string) => execKey(deps, executionId),
  /**
   * The same key from plain code (the engine's log encoder runs no Effect per write): the key,
   * or the part error of an id the schema refuses.
   */
  execKeySync: (executionId: string): string | KeyPartError => deps.schema.key("executionLogExec", { executionId }),
  nodeKey: (executionId: string, seq: number) => nodeKey(deps, executionId, seq),
  /** The key range of one execution, its record and its nodes: `{prefix}:dag:log:{executionId}:`. */
  executionKeyPrefix: (executionId: string): Effect.Effect<string, InvalidInput> =>
    Effect.map(execKey(deps, executionId), (key) => key.slice(0, key.length - "exec".length)),
  parseKey: (key: string) => parseKey(deps, key),
  write: (values: ReadonlyArray<LogValue>, executions?: ReadonlyArray<OpenedExecution>) => write(deps, values, executions),
  commit: (scope: string, keys: ReadonlyArray<string>) => commit(deps, scope, keys),
  commitAll: (requests: ReadonlyArray<CommitRequest>) => commitAll(deps, requests),
  readValues: (keys: ReadonlyArray<string>) => readValues(deps, keys),
  readExec: (executionId: string) => readExec(deps, executionId),
  readNodes: (executionId: string, from: number, to: number) => readNodes(deps, executionId, from, to),
  oldestBeyond: (cap: number) => oldestBeyond(deps, cap),
  /**
   * Removes executions from Valkey: their record, nodes `0..lastSeq` and their place in
   * `dag:log:executions`, in one pipelined round trip (an UNLINK per 1000 keys, a ZREM per 1000 ids).
   */
  remove: (executions: ReadonlyArray<ExecutionExtent>): Effect.Effect<void, InvalidInput | ConnectionError> => Effect.asVoid(removeThenRead(deps, executions)),
  /**
   * Retention: removes the oldest closed executions beyond `cap` (record, nodes `0..lastSeq` read
   * from the record, place in the list); a running one stays, so while more than `cap` run the
   * list holds every running one. An execution whose record is gone or unreadable loses only its
   * record and place. Returns the ids removed. Two round trips per page of up to 1000
   * executions, never one per execution (see `ExecutionLogRetention.ts`).
   */
  retain: (cap: number): Effect.Effect<ReadonlyArray<string>, InvalidInput | WrongType | ConnectionError> => retainExecutions(deps, cap)
})

/**
 * The execution log in Valkey: `dag:log:{executionId}:exec`,
 * `dag:log:{executionId}:n:{seq}`, `dag:log:executions` and the commit streams
 * `dag:commits:{scope}`. Values are bytes written once by the engine; this service writes and
 * reads them as they are (no encoding here), so a value crosses to storage unchanged.
 */
export class ExecutionLogStore extends Context.Service<ExecutionLogStore>()("@microdcs/store/ExecutionLogStore", {
  make: Effect.gen(function* () {
    const valkey = yield* Valkey
    const schema = valkey.keys
    const logPrefix = `${encodeKeyPartUnchecked(schema.prefix)}:dag:log:`
    const executionsKey = yield* valkey.key("executionLogExecutions", {})
    return executionLogMethods({ valkey, schema, logPrefix, executionsKey, checked: new CheckedExecutions() })
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
