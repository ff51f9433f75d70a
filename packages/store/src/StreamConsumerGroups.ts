import type { Redis } from "iovalkey"
import { Effect } from "effect"
import type { ConnectionError, InvalidInput, NotFound, WrongType } from "./Errors.js"
import { refused, runStream, streamAttempt } from "./StreamCommand.js"
import { decodePendingEntries, decodePendingSummary, decodeReadGroup, type PendingEntry, type PendingSummary, type StreamBatch } from "./StreamEntries.js"
import * as Check from "./StreamInput.js"
import type { ValkeyService } from "./Valkey.js"

export interface ReadGroupOptions {
  readonly streams: ReadonlyArray<string>
  readonly group: string
  readonly consumer: string
  /** Most entries per stream (default 100). */
  readonly count?: number | undefined
  /**
   * Wait up to this long for new entries (0 = forever). Only on a connection of its own, opened
   * without a command timeout: a blocked connection serves nobody else.
   */
  readonly blockMs?: number | undefined
}

export interface PendingQuery {
  /** Only this consumer's entries. */
  readonly consumer?: string | undefined
  /** Only entries idle at least this long. */
  readonly minIdleMs?: number | undefined
  readonly start?: string | undefined
  readonly end?: string | undefined
  /** Default 100. */
  readonly count?: number | undefined
}

/**
 * Creates `group` on `stream` (and the stream, MKSTREAM). `true` when created, `false` when it
 * already existed (BUSYGROUP is not an error). The default start id "0" delivers every
 * entry already in the stream: a work stream must not lose what was written before its group.
 */
export const ensureGroup = (valkey: ValkeyService, stream: string, group: string, startId: string = "0") =>
  Effect.gen(function* () {
    yield* Check.name("group", group)
    yield* Check.startId(startId)
    const r = yield* streamAttempt(valkey, "XGROUP CREATE", (c) => c.call("XGROUP", "CREATE", stream, group, startId, "MKSTREAM"))
    if ("ok" in r) return true
    if (r.refused.startsWith("BUSYGROUP")) return false
    return yield* refused(valkey, [stream], r.refused)
  })

/**
 * New entries (id `>`) for `consumer`. Non-blocking on the shared connection; with `blockMs`,
 * only on `connection`, a connection of its own whose command timeout is longer than the block
 * (an interrupted blocking read stays blocked on the server until it ends: close or reuse with care).
 */
export const readGroup = (
  valkey: ValkeyService,
  options: ReadGroupOptions,
  connection?: Redis
): Effect.Effect<ReadonlyArray<StreamBatch>, NotFound | WrongType | InvalidInput | ConnectionError> =>
  // Combinators, not a generator: a poller reads through here once per round.
  Effect.flatMap(Check.readGroup(options, connection), () => {
    const block = options.blockMs === undefined ? [] : ["BLOCK", options.blockMs]
    const args = [
      "GROUP", options.group, options.consumer, "COUNT", options.count ?? 100, ...block,
      "STREAMS", ...options.streams, ...options.streams.map(() => ">")
    ]
    return Effect.map(runStream(valkey, "XREADGROUP", options.streams, (c) => c.call("XREADGROUP", ...args), connection), decodeReadGroup)
  })

export const ack = (valkey: ValkeyService, stream: string, group: string, ids: ReadonlyArray<string>) =>
  ids.length === 0
    ? Effect.succeed(0)
    : runStream(valkey, "XACK", [stream], (c) => c.xack(stream, group, ...ids))

/**
 * Acknowledges `ids` for `group` and deletes them from the stream, in one MULTI: for entries
 * whose work was carried out before the group read them (the engine's direct send of a
 * command), so that nobody is ever delivered them, not even this consumer after a restart.
 * Only for a stream read by this one group. The reply is the number of entries deleted.
 */
export const ackAndDelete = (valkey: ValkeyService, stream: string, group: string, ids: ReadonlyArray<string>) =>
  ids.length === 0
    ? Effect.succeed(0)
    : runStream(valkey, "XACK XDEL", [stream], (c) =>
        c.multi().xack(stream, group, ...ids).xdel(stream, ...ids).exec().then((replies) => {
          const failed = (replies ?? []).find(([error]) => error)
          if (failed) throw failed[0]
          return Number(replies?.[1]?.[1] ?? 0)
        })
      )

export const pending = (valkey: ValkeyService, stream: string, group: string): Effect.Effect<PendingSummary, NotFound | WrongType | ConnectionError> =>
  runStream(valkey, "XPENDING", [stream], (c) => c.call("XPENDING", stream, group)).pipe(Effect.map(decodePendingSummary))

export const pendingEntries = (
  valkey: ValkeyService,
  stream: string,
  group: string,
  query: PendingQuery = {}
): Effect.Effect<ReadonlyArray<PendingEntry>, NotFound | WrongType | InvalidInput | ConnectionError> =>
  Effect.gen(function* () {
    yield* Check.count(query.count)
    const idle = query.minIdleMs === undefined ? [] : ["IDLE", Math.max(0, Math.floor(query.minIdleMs))]
    const args = [stream, group, ...idle, query.start ?? "-", query.end ?? "+", query.count ?? 100, ...(query.consumer ? [query.consumer] : [])]
    return decodePendingEntries(yield* runStream(valkey, "XPENDING", [stream], (c) => c.call("XPENDING", ...args)))
  })
