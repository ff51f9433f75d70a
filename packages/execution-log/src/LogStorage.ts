import { SqlClient, type SqlError } from "effect/sql"
import { Array as Arr, Context, Effect, Layer } from "effect"

/** The one table of the log in PostgreSQL. */
export const LOG_TABLE = "execution_log"

/** One stored row: the Valkey key and its bytes, unchanged. */
export interface StoredValue {
  readonly key: string
  readonly value: Uint8Array
}

/** A stored row with the time it was last committed. */
export interface StoredRow extends StoredValue {
  readonly committedAt: Date
}

/**
 * Rows per INSERT: three parameters each keeps a statement far below PostgreSQL's 65535
 * parameters, and one statement is atomic on its own (no transaction, which PGlite's multiplexed
 * connections would interleave).
 */
export const ROWS_PER_STATEMENT = 500

/**
 * The upper bound of a prefix range: the prefix with its last character raised by one. A bound of
 * `p || '\xff'` (a byte above any byte of a key) cannot be written in a UTF-8 database; UTF-8
 * byte order is code point order, so every key that starts with `p` is below this bound
 * (collation "C") and nothing else in `[p, bound)` is. `undefined` when there is none (every key).
 */
export const prefixUpperBound = (prefix: string): string | undefined => {
  const chars = [...prefix]
  while (chars.length > 0) {
    const last = chars.pop()!.codePointAt(0)!
    if (last < 0x10ffff) return chars.join("") + String.fromCodePoint(last === 0xd7ff ? 0xe000 : last + 1)
  }
  return undefined
}

export interface LogStorageService {
  /** Whether a database stands behind it (`withoutLogStorage`: none, reads find nothing). */
  readonly hasDatabase: boolean
  /** Creates the table when it is missing (`key text primary key collate "C"`, `value bytea`, `committed_at`). */
  readonly ensureTable: Effect.Effect<void, SqlError.SqlError>
  /** Upserts the rows: a key written again is a rewrite (new bytes, new `committed_at`), never a second row. */
  readonly upsert: (rows: ReadonlyArray<StoredValue>) => Effect.Effect<void, SqlError.SqlError>
  /** Every row whose key starts with `prefix`, in key (byte) order. */
  readonly readPrefix: (prefix: string) => Effect.Effect<ReadonlyArray<StoredRow>, SqlError.SqlError>
  /** Every row of the given keys that is stored, in key order. */
  readonly readKeys: (keys: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<StoredRow>, SqlError.SqlError>
  /** The execution records (keys ending in `:exec`) under `prefix` whose bytes contain `needle`: a byte search, no decoding. */
  readonly execRecordsContaining: (prefix: string, needle: Uint8Array) => Effect.Effect<ReadonlyArray<StoredValue>, SqlError.SqlError>
}

/** The execution log's table in PostgreSQL, over the `SqlClient` of `effect/sql` (`@effect/sql-pg` in practice). */
export class LogStorage extends Context.Service<LogStorage, LogStorageService>()("@microdcs/execution-log/LogStorage") {}

interface RawRow {
  readonly key: string
  readonly value: Uint8Array
  readonly committed_at: Date
}

/**
 * The bytes as a `Buffer` of their own, as the reads returned them before: `@effect/sql-pg` decodes
 * `bytea` to a `Uint8Array` view into its read buffer (which it would keep alive).
 */
const ownBytes = (value: Uint8Array): Buffer => Buffer.from(value)

const toRow = (r: RawRow): StoredRow => ({ key: r.key, value: ownBytes(r.value), committedAt: r.committed_at })

const toValue = (r: StoredValue): StoredValue => ({ key: r.key, value: ownBytes(r.value) })

export const makeLogStorage: Effect.Effect<LogStorageService, SqlError.SqlError, SqlClient.SqlClient> = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const table = sql(LOG_TABLE)

  const ensureTable = sql`create table if not exists ${table} (
    key text collate "C" primary key,
    value bytea not null,
    committed_at timestamptz not null default now()
  )`.pipe(Effect.asVoid)

  const upsert = (rows: ReadonlyArray<StoredValue>) =>
    Effect.gen(function* () {
      // The last value of a key wins, as a second commit of it would.
      const byKey = new Map(rows.map((r) => [r.key, r.value]))
      const unique = [...byKey].map(([key, value]) => ({ key, value }))
      for (const part of Arr.chunksOf(unique, ROWS_PER_STATEMENT)) {
        yield* sql`insert into ${table} ${sql.insert(part)}
          on conflict (key) do update set value = excluded.value, committed_at = now()`
      }
    })

  const readPrefix = (prefix: string) => {
    const bound = prefixUpperBound(prefix)
    const rows =
      bound === undefined
        ? sql<RawRow>`select key, value, committed_at from ${table} where key >= ${prefix} order by key`
        : sql<RawRow>`select key, value, committed_at from ${table} where key >= ${prefix} and key < ${bound} order by key`
    return Effect.map(rows, (found) => found.map(toRow))
  }

  const readKeys = (keys: ReadonlyArray<string>) =>
    keys.length === 0
      ? Effect.succeed([])
      : sql<RawRow>`select key, value, committed_at from ${table} where ${sql.in("key", keys)} order by key`.pipe(
          Effect.map((rows) => rows.map(toRow))
        )

  const execRecordsContaining = (prefix: string, needle: Uint8Array) => {
    // Only a prefix of U+10FFFF characters has no bound: no island's log prefix is one.
    const bound = prefixUpperBound(prefix) ?? "\u{10ffff}"
    return sql<StoredValue>`select key, value from ${table}
      where key >= ${prefix} and key < ${bound} and right(key, 5) = ':exec' and position(${needle} in value) > 0`.pipe(
      Effect.map((rows) => rows.map(toValue))
    )
  }

  yield* ensureTable
  return { hasDatabase: true, ensureTable, upsert, readPrefix, readKeys, execRecordsContaining }
})

/** `LogStorage` over the `SqlClient` in context; creates the table when it starts. */
export const logStorageLayer: Layer.Layer<LogStorage, SqlError.SqlError, SqlClient.SqlClient> = Layer.effect(LogStorage, makeLogStorage)
