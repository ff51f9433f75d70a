import { Effect, Result } from "effect"
import { encodeKeyPartUnchecked } from "@microdcs/keyschema"
import { type ConnectionError, WrongType } from "./Errors.js"
import { pipelined, type PipelinedRead, scanKeys, typesOf, wrongTypeCell } from "./IndexReads.js"
import { command } from "./RawDoor.js"
import type { ValkeyService } from "./Valkey.js"

/**
 * Typed reads of keys by name, for code that reads key families the store's DAOs do not know:
 * an extension's index maintenance (the journal's check), an operator's view, a test's snapshot.
 * Every read of many keys is one pipelined round trip, results in key order. A key of another
 * type than the read expects is that item's `Left(WrongType)` (a corrupted key is reported, not
 * thrown); a missing key reads as empty. Keys come from the island's key schema (`valkey.key`,
 * `IndexContext.keys`), never built by hand.
 */

/** One item's read: its value, or the `WrongType` of a key that holds another type. */
export type KeyRead<A> = Result.Result<A, WrongType>

/** A field of a hash. */
export interface HashField {
  readonly key: string
  readonly field: string
}

/** Runs `onBatch` for each SCAN batch of keys matching `pattern` (a key schema pattern), including empty batches. */
export const scan = <E, R>(
  valkey: ValkeyService,
  pattern: string,
  onBatch: (keys: ReadonlyArray<string>) => Effect.Effect<void, E, R>
): Effect.Effect<void, E | ConnectionError, R> => scanKeys(valkey, pattern, onBatch)

/** Every key of the island (under its prefix, of any family), sorted; by SCAN, never KEYS, which blocks the server. */
export const islandKeys = (valkey: ValkeyService): Effect.Effect<ReadonlyArray<string>, ConnectionError> =>
  Effect.suspend(() => {
    const found = new Set<string>()
    const pattern = `${encodeKeyPartUnchecked(valkey.keys.prefix).replace(/[*?[\]\\]/g, "\\$&")}:*`
    return scanKeys(valkey, pattern, (keys) => Effect.sync(() => keys.forEach((key) => found.add(key)))).pipe(Effect.map(() => [...found].sort()))
  })

/** The pipelined reads, each cell a `KeyRead`; the actual types of wrong keys are read only on that rare path. */
const readEach = <A>(
  valkey: ValkeyService,
  operation: string,
  expected: string,
  keys: ReadonlyArray<string>,
  read: (key: string, i: number) => PipelinedRead,
  decode: (cell: unknown) => A
): Effect.Effect<ReadonlyArray<KeyRead<A>>, ConnectionError> =>
  Effect.gen(function* () {
    const cells = yield* pipelined(valkey, operation, keys.map(read))
    const wrong = keys.filter((_, i) => cells[i] === wrongTypeCell)
    const actual = new Map<string, string>()
    if (wrong.length > 0) (yield* typesOf(valkey, wrong)).forEach((type, i) => actual.set(wrong[i]!, type))
    return cells.map((cell, i): KeyRead<A> => {
      const key = keys[i]!
      return cell === wrongTypeCell ? Result.fail(new WrongType({ key, expected, actual: actual.get(key) ?? "unknown" })) : Result.succeed(decode(cell))
    })
  })

/** Every field of each hash (HGETALL). */
export const hashes = (valkey: ValkeyService, keys: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<KeyRead<Readonly<Record<string, string>>>>, ConnectionError> =>
  readEach(valkey, "read hashes", "hash", keys, (key) => (p) => p.hgetall(key), (cell) => cell as Record<string, string>)

/** One field of each hash (HGET); `null` when the field or the hash is missing. */
export const hashFields = (valkey: ValkeyService, fields: ReadonlyArray<HashField>): Effect.Effect<ReadonlyArray<KeyRead<string | null>>, ConnectionError> =>
  readEach(valkey, "read hash fields", "hash", fields.map((f) => f.key), (key, i) => (p) => p.hget(key, fields[i]!.field), (cell) => (cell === null ? null : String(cell)))

/** Whether each hash has the field (HEXISTS). */
export const hashFieldsExist = (valkey: ValkeyService, fields: ReadonlyArray<HashField>): Effect.Effect<ReadonlyArray<KeyRead<boolean>>, ConnectionError> =>
  readEach(valkey, "hash fields exist", "hash", fields.map((f) => f.key), (key, i) => (p) => p.hexists(key, fields[i]!.field), (cell) => cell === 1)

/** The number of fields of each hash (HLEN); 0 for a missing one. */
export const hashLengths = (valkey: ValkeyService, keys: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<KeyRead<number>>, ConnectionError> =>
  readEach(valkey, "hash lengths", "hash", keys, (key) => (p) => p.hlen(key), Number)

/** Every member of each sorted set, lowest score first (ZRANGE 0 -1). */
export const sortedSetMembers = (valkey: ValkeyService, keys: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<KeyRead<ReadonlyArray<string>>>, ConnectionError> =>
  readEach(valkey, "sorted set members", "zset", keys, (key) => (p) => p.zrange(key, 0, -1), (cell) => cell as ReadonlyArray<string>)

/** Whether each key exists (EXISTS), of any type. */
export const exist = (valkey: ValkeyService, keys: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<boolean>, ConnectionError> =>
  pipelined(valkey, "keys exist", keys.map((key) => (p) => p.exists(key))).pipe(Effect.map((cells) => cells.map((n) => n === 1)))

/**
 * The values of string keys in one MGET, as texts or as the bytes stored (binary values);
 * `null` for a missing key and for a key of another type (MGET reads those as missing).
 */
export function values(valkey: ValkeyService, keys: ReadonlyArray<string>, form?: "text"): Effect.Effect<ReadonlyArray<string | null>, ConnectionError>
export function values(valkey: ValkeyService, keys: ReadonlyArray<string>, form: "bytes"): Effect.Effect<ReadonlyArray<Buffer | null>, ConnectionError>
export function values(valkey: ValkeyService, keys: ReadonlyArray<string>, form: "text" | "bytes" = "text"): Effect.Effect<ReadonlyArray<string | Buffer | null>, ConnectionError> {
  if (keys.length === 0) return Effect.succeed([])
  return form === "bytes" ? command(valkey, "read values", (c) => c.mgetBuffer(...keys)) : command(valkey, "read values", (c) => c.mget(...keys))
}

/**
 * Fields of one hash in one HMGET, as texts or as the bytes stored (binary values); `null` for
 * a missing field. A key of another type is `WrongType`.
 */
export function hashValues(valkey: ValkeyService, key: string, fields: ReadonlyArray<string>, form?: "text"): Effect.Effect<ReadonlyArray<string | null>, WrongType | ConnectionError>
export function hashValues(valkey: ValkeyService, key: string, fields: ReadonlyArray<string>, form: "bytes"): Effect.Effect<ReadonlyArray<Buffer | null>, WrongType | ConnectionError>
export function hashValues(
  valkey: ValkeyService,
  key: string,
  fields: ReadonlyArray<string>,
  form: "text" | "bytes" = "text"
): Effect.Effect<ReadonlyArray<string | Buffer | null>, WrongType | ConnectionError> {
  if (fields.length === 0) return Effect.succeed([])
  const read: PipelinedRead = form === "bytes" ? (p) => p.hmgetBuffer(key, ...fields) : (p) => p.hmget(key, ...fields)
  return readEach(valkey, "read hash values", "hash", [key], () => read, (cell) => cell as ReadonlyArray<string | Buffer | null>).pipe(
    Effect.flatMap(([read]) => Effect.fromResult(read!))
  )
}

export { contents, type KeyContent } from "./KeyContents.js"
