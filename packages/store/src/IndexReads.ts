import type { ChainableCommander } from "iovalkey"
import { Effect } from "effect"
import type { ConnectionError, WrongType } from "./Errors.js"
import { isReplyError } from "./FailureKind.js"
import { typedCommand } from "./TypeGuard.js"
import type { ValkeyService } from "./Valkey.js"
import { command } from "./RawDoor.js"

/**
 * The reads of the index check and rebuild: SCAN over the keyspace (never KEYS, which blocks the
 * server), SSCAN/ZSCAN over one index, and pipelined batches of point reads. Maintenance reads,
 * not a hot path: batches of {@link SCAN_COUNT} keep round trips few and each reply small.
 */
export const SCAN_COUNT = 500

/** A pipelined read that hit a key of another type (WRONGTYPE): a corrupted key, reported, not thrown. */
export const wrongTypeCell: unique symbol = Symbol("wrongtype")
export type Cell<A> = A | typeof wrongTypeCell

/** One command of a pipeline. */
export type PipelinedRead = (pipeline: ChainableCommander) => unknown

/**
 * Runs `reads` in one pipeline, results in order. A WRONGTYPE reply becomes
 * {@link wrongTypeCell}; any other reply error is a bug and dies (via the raw command).
 */
export const pipelined = (
  valkey: ValkeyService,
  operation: string,
  reads: ReadonlyArray<PipelinedRead>
): Effect.Effect<ReadonlyArray<unknown>, ConnectionError> =>
  reads.length === 0
    ? Effect.succeed([])
    : command(valkey, operation, async (c) => {
        const pipeline = c.pipeline()
        for (const read of reads) read(pipeline)
        const results = (await pipeline.exec()) ?? []
        return results.map(([error, value]) => {
          if (!error) return value
          if (isReplyError(error) && error.message.startsWith("WRONGTYPE")) return wrongTypeCell
          throw error
        })
      })

/** The Valkey type of each key (`none` when missing), in one round trip. */
export const typesOf = (valkey: ValkeyService, keys: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<string>, ConnectionError> =>
  pipelined(valkey, "index types", keys.map((key) => (p) => p.type(key))).pipe(Effect.map((types) => types.map(String)))

/** Runs `onBatch` for each SCAN batch of keys matching `pattern`, including empty batches. */
export const scanKeys = <E, R>(
  valkey: ValkeyService,
  pattern: string,
  onBatch: (keys: ReadonlyArray<string>) => Effect.Effect<void, E, R>
): Effect.Effect<void, E | ConnectionError, R> =>
  Effect.gen(function* () {
    let cursor = "0"
    do {
      const [next, keys]: [string, Array<string>] = yield* command(valkey, "index scan", (c) =>
        c.scan(cursor, "MATCH", pattern, "COUNT", SCAN_COUNT)
      )
      yield* onBatch(keys)
      cursor = next
    } while (cursor !== "0")
  })

/** Runs `onPage` for each SSCAN/ZSCAN page of the members of one set or sorted set. */
export const scanMembers = <E, R>(
  valkey: ValkeyService,
  key: string,
  indexType: "set" | "zset",
  onPage: (ids: ReadonlyArray<string>) => Effect.Effect<void, E, R>
): Effect.Effect<void, E | WrongType | ConnectionError, R> =>
  Effect.gen(function* () {
    let cursor = "0"
    do {
      const [next, page] = yield* typedCommand(valkey, "index member scan", key, indexType, (c) =>
        indexType === "zset" ? c.zscan(key, cursor, "COUNT", SCAN_COUNT) : c.sscan(key, cursor, "COUNT", SCAN_COUNT)
      )
      // ZSCAN pages alternate member and score; the score is judged from the document side.
      yield* onPage(indexType === "zset" ? page.filter((_, i) => i % 2 === 0) : page)
      cursor = next
    } while (cursor !== "0")
  })

/** A text reply (or `null`) of a pipelined read. */
export const textCell = (cell: unknown): Cell<string | null> =>
  cell === wrongTypeCell ? wrongTypeCell : cell === null || cell === undefined ? null : String(cell)

/** The field values of a pipelined HMGET. */
export const fieldsCell = (cell: unknown): Cell<ReadonlyArray<string | null>> =>
  cell === wrongTypeCell ? wrongTypeCell : (cell as ReadonlyArray<string | null>)
