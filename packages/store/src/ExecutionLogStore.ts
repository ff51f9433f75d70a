import { Effect, Option } from "effect"
import { encodeKeyPartUnchecked, KeyPartError, MAX_NODE_SEQ, nodeSeqOf, nodeSeqPart } from "@microdcs/keyschema"
import { type ConnectionError, InvalidInput, WrongType } from "./Errors.js"
import { CheckedExecutions, CHUNK, chunks, executionPartOf, keyPartInvalid } from "./ExecutionLogKeyShape.js"
import { type ExecutionExtent, removeThenRead, retain as retainExecutions } from "./ExecutionLogRetention.js"
import { typedCommand } from "./TypeGuard.js"
import { Valkey } from "./Valkey.js"
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

/** One commit request: the scope whose stream gets it and the keys it hands over. */
export interface CommitRequest {
  readonly scope: string
  readonly keys: ReadonlyArray<string>
}

/**
 * The execution log in Valkey: `dag:log:{executionId}:exec`,
 * `dag:log:{executionId}:n:{seq}`, `dag:log:executions` and the commit streams
 * `dag:commits:{scope}`. Values are bytes written once by the engine; this service writes and
 * reads them as they are (no encoding here), so a value crosses to storage unchanged.
 */
export class ExecutionLogStore extends Effect.Service<ExecutionLogStore>()("@microdcs/store/ExecutionLogStore", {
  effect: Effect.gen(function* () {
    const valkey = yield* Valkey
    const schema = valkey.keys
    /** Every log key starts with this (`{prefix}:dag:log:`); a commit may name nothing else. */
    const logPrefix = `${encodeKeyPartUnchecked(schema.prefix)}:dag:log:`
    const executionsKey = yield* valkey.key("executionLogExecutions", {})

    const execKey = (executionId: string) => valkey.key("executionLogExec", { executionId })

    /**
     * The same key from plain code (the engine's log encoder runs no Effect per write): the key,
     * or the part error of an id the schema refuses.
     */
    const execKeySync = (executionId: string): string | KeyPartError => schema.key("executionLogExec", { executionId })

    const nodeKey = (executionId: string, seq: number): Effect.Effect<string, InvalidInput> => {
      const part = nodeSeqPart(seq)
      return part instanceof KeyPartError ? Effect.fail(keyPartInvalid(part)) : valkey.key("executionLogNode", { executionId, seq: part })
    }

    /** The key range of one execution, its record and its nodes: `{prefix}:dag:log:{executionId}:`. */
    const executionKeyPrefix = (executionId: string): Effect.Effect<string, InvalidInput> =>
      Effect.map(execKey(executionId), (key) => key.slice(0, key.length - "exec".length))

    /** What a full key is in the log, or `undefined` for any other key (another family, prefix or shape). */
    const parseKey = (key: string): ExecutionLogKey | undefined => {
      if (!key.startsWith(logPrefix)) return undefined
      const parsed = schema.parse(key)
      if (parsed?.family === "executionLogExec") return { kind: "exec", executionId: parsed.parts.executionId }
      if (parsed?.family === "executionLogNode") {
        const seq = nodeSeqOf(parsed.parts.seq)
        return seq === undefined ? undefined : { kind: "node", executionId: parsed.parts.executionId, seq }
      }
      return undefined
    }

    /**
     * Writes log values and lists `executions` in `dag:log:executions` (score: open time in ms;
     * ZADD NX, so one listed before keeps its score). The caller lists every execution whose record
     * `values` hold: then a record is never outside the list, which retention walks (values and
     * list in one MULTI, so neither lands without the other). A key that is no exec or node key is
     * `InvalidInput`, nothing written.
     */
    // Each execution's part is parsed once while it is written (its keys differ only in the suffix checked above).
    const checked = new CheckedExecutions()

    const write = (
      values: ReadonlyArray<LogValue>,
      executions: ReadonlyArray<{ readonly executionId: string; readonly openedAt: number }> = []
    ): Effect.Effect<void, InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        // One pass checks every key and builds the MSET arguments, so nothing is written unless all are log keys.
        const args: Array<string | Buffer> = []
        for (const v of values) {
          const base = executionPartOf(v.key)
          if (base === undefined || (!checked.has(base) && parseKey(v.key) === undefined)) {
            return yield* new InvalidInput({ field: "key", message: `'${v.key}' is no execution log key` })
          }
          checked.add(base)
          args.push(v.key, typeof v.value === "string" ? v.value : Buffer.from(v.value.buffer, v.value.byteOffset, v.value.byteLength))
        }
        const bad = executions.find((o) => !Number.isFinite(o.openedAt))
        if (bad) return yield* new InvalidInput({ field: "openedAt", message: `openedAt of ${bad.executionId} is not a finite number` })
        if (values.length === 0 && executions.length === 0) return
        // Nodes only (no record, nothing to list): one MSET, sent on its own.
        if (executions.length === 0 && values.length <= CHUNK) {
          yield* command(valkey, "write execution log", (c) => c.mset(args))
          return
        }
        // Else one MSET per chunk and one ZADD NX per chunk of executions, in one MULTI.
        yield* command(valkey, "write execution log", async (c) => {
          const transaction = c.multi()
          for (let i = 0; i < args.length; i += 2 * CHUNK) transaction.mset(args.slice(i, i + 2 * CHUNK))
          for (const part of chunks(executions)) transaction.zadd(executionsKey, "NX", ...part.flatMap((o) => [o.openedAt, o.executionId]))
          for (const [error] of (await transaction.exec()) ?? []) if (error) throw error
        })
      })

    /**
     * Appends a commit request (the keys, never the values) to `dag:commits:{scope}`, registers the
     * scope and nudges the storage role. The keys are not judged here: the storage role is the one
     * guard (a request with any key outside the log is refused there, whoever appended it).
     */
    const commit = (scope: string, keys: ReadonlyArray<string>): Effect.Effect<string, InvalidInput | WrongType | ConnectionError> =>
      Effect.gen(function* () {
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
    const commitAll = (requests: ReadonlyArray<CommitRequest>): Effect.Effect<void, InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
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
    const readValues = (keys: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<Buffer | undefined>, ConnectionError> =>
      Effect.map(
        Effect.forEach(chunks(keys), (part) => command(valkey, "read execution log", (c) => c.mgetBuffer(...part))),
        (parts) => parts.flat().map((v) => v ?? undefined)
      )

    /** The execution record's bytes, or none. */
    const readExec = (executionId: string): Effect.Effect<Option.Option<Buffer>, InvalidInput | WrongType | ConnectionError> =>
      Effect.gen(function* () {
        const key = yield* execKey(executionId)
        return Option.fromNullable(yield* typedCommand(valkey, "read execution", key, "string", (c) => c.getBuffer(key)))
      })

    /** The nodes `from..to` (inclusive) of an execution that are in Valkey, in sequence order. */
    const readNodes = (
      executionId: string,
      from: number,
      to: number
    ): Effect.Effect<ReadonlyArray<{ readonly seq: number; readonly key: string; readonly value: Buffer }>, InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        const first = Math.max(0, from)
        const last = Math.min(to, MAX_NODE_SEQ)
        const seqs: Array<number> = []
        for (let seq = first; seq <= last; seq++) seqs.push(seq)
        const keys = yield* Effect.forEach(seqs, (seq) => nodeKey(executionId, seq))
        const values = yield* readValues(keys)
        return seqs.flatMap((seq, i) => (values[i] === undefined ? [] : [{ seq, key: keys[i]!, value: values[i]! }]))
      })

    /** The ids of the oldest executions beyond the newest `cap`, oldest first. */
    const oldestBeyond = (cap: number): Effect.Effect<ReadonlyArray<string>, InvalidInput | WrongType | ConnectionError> =>
      Effect.gen(function* () {
        if (!Number.isSafeInteger(cap) || cap < 0) return yield* new InvalidInput({ field: "cap", message: `cap ${cap} is not a whole number >= 0` })
        const count = yield* typedCommand(valkey, "count executions", executionsKey, "zset", (c) => c.zcard(executionsKey))
        if (count <= cap) return []
        return yield* command(valkey, "oldest executions", (c) => c.zrange(executionsKey, 0, count - cap - 1))
      })

    /** Retention's dependencies: this store's connection and the list of executions. */
    const retention = { valkey, executionsKey }

    /**
     * Removes executions from Valkey: their record, nodes `0..lastSeq` and their place in
     * `dag:log:executions`, in one pipelined round trip (an UNLINK per 1000 keys, a ZREM per 1000 ids).
     */
    const remove = (executions: ReadonlyArray<ExecutionExtent>): Effect.Effect<void, InvalidInput | ConnectionError> =>
      Effect.asVoid(removeThenRead(retention, executions))

    /**
     * Retention: removes the oldest closed executions beyond `cap` (record, nodes `0..lastSeq` read
     * from the record, place in the list); a running one stays, so while more than `cap` run the
     * list holds every running one. An execution whose record is gone or unreadable loses only its
     * record and place. Returns the ids removed. Two round trips per page of up to 1000
     * executions, never one per execution (see `ExecutionLogRetention.ts`).
     */
    const retain = (cap: number): Effect.Effect<ReadonlyArray<string>, InvalidInput | WrongType | ConnectionError> => retainExecutions(retention, cap)

    return {
      logPrefix, execKey, execKeySync, nodeKey, executionKeyPrefix, parseKey, write, commit, commitAll, readValues, readExec, readNodes, oldestBeyond, remove, retain
    } as const
  })
}) {}
