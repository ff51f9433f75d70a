import type { Redis } from "iovalkey"
import { Effect, Metric, Option, Stream } from "effect"
import type { KeyFamily, KeyParts } from "@microdcs/keyschema"
import { deadLetterEntry, trimStream } from "@microdcs/lua-scripts"
import { type ConnectionError, type InvalidInput, NotFound, WrongType } from "./Errors.js"
import { guard, onConnection } from "./StreamCommand.js"
import {
  type ClaimPage,
  type DeadLetterEntry,
  decodeAutoClaim,
  decodeDeadLetter,
  decodeEntries,
  decodePendingEntries,
  decodePendingSummary,
  decodeReadGroup,
  type PendingEntry,
  type PendingSummary,
  type StreamBatch,
  type StreamEntry
} from "./StreamEntries.js"
import { typedCommand } from "./TypeGuard.js"
import { Valkey } from "./Valkey.js"
import * as Check from "./StreamInput.js"
import { command } from "./RawDoor.js"

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

export interface DeadLetterMove {
  readonly stream: string
  /** The dead-letter stream (see `deadLetterKey`). */
  readonly deadLetter: string
  readonly group: string
  /** The consumer that must still own the entry; if another one claimed it, nothing moves. */
  readonly consumer: string
  readonly id: string
  readonly error: string
}

export type DeadLetterOutcome =
  | { readonly status: "moved"; readonly deadLetterId: string }
  | { readonly status: "notpending" }
  | { readonly status: "notowner"; readonly owner: string }

/** Key families whose only part is the scope (`changes:{scope}`, `sfc:work:{scope}`): one stream per scope. */
export type ScopedFamily = {
  [F in KeyFamily]: KeyParts<F> extends { readonly scope: string } ? (keyof KeyParts<F> extends "scope" ? F : never) : never
}[KeyFamily]

export interface ScopeStreamLength {
  readonly scope: string
  readonly stream: string
  /** Entries in the stream; 0 when it does not exist. */
  readonly length: number
}

export interface DeadLetterStreamInfo {
  readonly key: string
  readonly kind: string
  readonly scope: string
  readonly length: number
}

export interface DeadLetterPage {
  readonly entries: ReadonlyArray<DeadLetterEntry>
  /** Pass as `after` for the next page; `null` on the last one. */
  readonly next: string | null
}

/** Pending ids whose entries were deleted before anyone acknowledged them (counted, never silent). */
export const autoClaimDeletedCounter = Metric.counter("microdcs_stream_autoclaim_deleted_total", {
  description: "pending stream entries found deleted by XAUTOCLAIM (trimmed or XDEL'd before acknowledgement)"
})

/**
 * Consumer groups over Valkey streams: group creation,
 * reads, acknowledgement, the pending list, claims of orphans, dead letters and a trim that
 * never removes what some group has not acknowledged. Streams are given as keys built with
 * `valkey.key`; this service does not know which families are streams.
 */
export class ValkeyStreams extends Effect.Service<ValkeyStreams>()("@microdcs/store/ValkeyStreams", {
  effect: Effect.gen(function* () {
    const valkey = yield* Valkey

    const attempt = <A>(operation: string, run: (c: Redis) => Promise<A>, connection?: Redis) =>
      connection ? onConnection(connection, operation, guard(run)) : command(valkey, operation, guard(run))

    /** Maps NOGROUP to NotFound and WRONGTYPE to WrongType naming the offending key. */
    const refused = (keys: ReadonlyArray<string>, message: string): Effect.Effect<never, NotFound | WrongType | ConnectionError> =>
      message.startsWith("NOGROUP")
        ? Effect.fail(new NotFound({ key: keys.join(" "), message }))
        : command(valkey, "stream key types", (c) => Promise.all(keys.map((k) => c.type(k)))).pipe(
            Effect.flatMap((types) => {
              const at = types.findIndex((t) => t !== "stream" && t !== "none")
              return Effect.fail(new WrongType({ key: keys[Math.max(at, 0)]!, expected: "stream", actual: types[at] ?? "unknown" }))
            })
          )

    const run = <A>(operation: string, keys: ReadonlyArray<string>, fn: (c: Redis) => Promise<A>, connection?: Redis) =>
      attempt(operation, fn, connection).pipe(Effect.flatMap((r) => ("ok" in r ? Effect.succeed(r.ok) : refused(keys, r.refused))))

    /**
     * Creates `group` on `stream` (and the stream, MKSTREAM). `true` when created, `false` when it
     * already existed (BUSYGROUP is not an error). The default start id "0" delivers every
     * entry already in the stream: a work stream must not lose what was written before its group.
     */
    const ensureGroup = (stream: string, group: string, startId: string = "0") =>
      Effect.gen(function* () {
        yield* Check.name("group", group)
        yield* Check.startId(startId)
        const r = yield* attempt("XGROUP CREATE", (c) => c.call("XGROUP", "CREATE", stream, group, startId, "MKSTREAM"))
        if ("ok" in r) return true
        if (r.refused.startsWith("BUSYGROUP")) return false
        return yield* refused([stream], r.refused)
      })

    /**
     * New entries (id `>`) for `consumer`. Non-blocking on the shared connection; with `blockMs`,
     * only on `connection`, a connection of its own whose command timeout is longer than the block
     * (an interrupted blocking read stays blocked on the server until it ends: close or reuse with care).
     */
    const readGroup = (
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
        return Effect.map(run("XREADGROUP", options.streams, (c) => c.call("XREADGROUP", ...args), connection), decodeReadGroup)
      })

    const ack = (stream: string, group: string, ids: ReadonlyArray<string>) =>
      ids.length === 0
        ? Effect.succeed(0)
        : run("XACK", [stream], (c) => c.xack(stream, group, ...ids))

    /**
     * Acknowledges `ids` for `group` and deletes them from the stream, in one MULTI: for entries
     * whose work was carried out before the group read them (the engine's direct send of a
     * command), so that nobody is ever delivered them, not even this consumer after a restart.
     * Only for a stream read by this one group. The reply is the number of entries deleted.
     */
    const ackAndDelete = (stream: string, group: string, ids: ReadonlyArray<string>) =>
      ids.length === 0
        ? Effect.succeed(0)
        : run("XACK XDEL", [stream], (c) =>
            c.multi().xack(stream, group, ...ids).xdel(stream, ...ids).exec().then((replies) => {
              const failed = (replies ?? []).find(([error]) => error)
              if (failed) throw failed[0]
              return Number(replies?.[1]?.[1] ?? 0)
            })
          )

    const pending = (stream: string, group: string): Effect.Effect<PendingSummary, NotFound | WrongType | ConnectionError> =>
      run("XPENDING", [stream], (c) => c.call("XPENDING", stream, group)).pipe(Effect.map(decodePendingSummary))

    const pendingEntries = (
      stream: string,
      group: string,
      query: PendingQuery = {}
    ): Effect.Effect<ReadonlyArray<PendingEntry>, NotFound | WrongType | InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        yield* Check.count(query.count)
        const idle = query.minIdleMs === undefined ? [] : ["IDLE", Math.max(0, Math.floor(query.minIdleMs))]
        const args = [stream, group, ...idle, query.start ?? "-", query.end ?? "+", query.count ?? 100, ...(query.consumer ? [query.consumer] : [])]
        return decodePendingEntries(yield* run("XPENDING", [stream], (c) => c.call("XPENDING", ...args)))
      })

    /**
     * XCLAIM: takes `ids` for `consumer` if they are still idle at least `minIdleMs` (so of two
     * claimers only one wins). Each claim counts as a delivery. Deleted entries are not returned.
     */
    const claim = (stream: string, group: string, consumer: string, minIdleMs: number, ids: ReadonlyArray<string>) =>
      ids.length === 0
        ? Effect.succeed([] as ReadonlyArray<StreamEntry>)
        : run("XCLAIM", [stream], (c) => c.call("XCLAIM", stream, group, consumer, Math.max(0, Math.floor(minIdleMs)), ...ids)).pipe(
            Effect.map((raw): ReadonlyArray<StreamEntry> => decodeEntries("XCLAIM", raw))
          )

    /** Delivery counts of freshly claimed entries (XAUTOCLAIM does not report them); one round trip. */
    const deliveries = (stream: string, group: string, entries: ReadonlyArray<StreamEntry>) =>
      run("XPENDING", [stream], (c) => Promise.all(entries.map((e) => c.call("XPENDING", stream, group, e.id, e.id, 1)))).pipe(
        Effect.map((rows) => entries.map((e, i) => ({ ...e, deliveries: decodePendingEntries(rows[i])[0]?.deliveries ?? 1 })))
      )

    const claimPage = (stream: string, group: string, consumer: string, minIdleMs: number, cursor: string, count: number) =>
      Effect.gen(function* () {
        const raw = yield* run("XAUTOCLAIM", [stream], (c) =>
          c.call("XAUTOCLAIM", stream, group, consumer, Math.max(0, Math.floor(minIdleMs)), cursor, "COUNT", count)
        )
        const page = decodeAutoClaim(raw)
        if (page.deletedIds.length > 0) {
          yield* Metric.incrementBy(Metric.tagged(autoClaimDeletedCounter, "group", group), page.deletedIds.length)
          yield* Effect.logWarning("XAUTOCLAIM: pending entries were deleted before acknowledgement").pipe(
            Effect.annotateLogs({ stream, group, count: page.deletedIds.length, ids: page.deletedIds.slice(0, 20).join(",") })
          )
        }
        const entries = yield* deliveries(stream, group, page.entries)
        return { stream, cursor: page.cursor, entries, deletedIds: page.deletedIds } satisfies ClaimPage
      })

    /**
     * Takes over every entry pending longer than `minIdleMs` on any consumer (orphans of a dead
     * one), page by page from cursor 0-0 until the server returns 0-0 again. Each page is claimed
     * only when the stream pulls it, so a consumer can handle a page before claiming the next.
     * Deleted ids in a reply are logged and counted and reported in `deletedIds`.
     */
    const autoClaim = (
      stream: string,
      group: string,
      consumer: string,
      options: { readonly minIdleMs: number; readonly count?: number | undefined }
    ): Stream.Stream<ClaimPage, NotFound | WrongType | InvalidInput | ConnectionError> =>
      Stream.unwrap(
        Check.count(options.count).pipe(
          Effect.as(
            Stream.paginateEffect("0-0", (cursor: string) =>
              claimPage(stream, group, consumer, options.minIdleMs, cursor, options.count ?? 100).pipe(
                Effect.map((page) => [page, page.cursor === "0-0" ? Option.none<string>() : Option.some(page.cursor)] as const)
              )
            )
          )
        )
      )

    /** Copies a pending entry with its last error to `deadLetter` and acknowledges it, atomically. */
    const deadLetter = (move: DeadLetterMove): Effect.Effect<DeadLetterOutcome, WrongType | ConnectionError> =>
      Effect.gen(function* () {
        const reply = yield* valkey.script(deadLetterEntry, { stream: move.stream, deadLetter: move.deadLetter }, move)
        switch (reply.status) {
          case "ok":
            return { status: "moved", deadLetterId: reply.deadLetterId } as const
          case "wrongtype":
            return yield* new WrongType({ key: reply.key, expected: reply.expected, actual: reply.actual })
          default:
            return reply
        }
      })

    /**
     * Removes entries below the oldest one that some group still needs (its oldest pending id, or
     * what follows its last-delivered id), computed and applied in one script. A stream without
     * groups is left alone. `threshold` is null when nothing could be trimmed.
     */
    const trim = (stream: string): Effect.Effect<{ readonly removed: number; readonly threshold: string | null }, WrongType | ConnectionError> =>
      Effect.gen(function* () {
        const reply = yield* valkey.script(trimStream, { stream }, undefined)
        switch (reply.status) {
          case "ok":
            return { removed: reply.removed, threshold: reply.threshold }
          case "wrongtype":
            return yield* new WrongType({ key: reply.key, expected: reply.expected, actual: reply.actual })
          default:
            return { removed: 0, threshold: null }
        }
      })

    /** XLEN of each stream (0 for a missing one), in one round trip. */
    const lengths = (streamKeys: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<number>, WrongType | ConnectionError> =>
      streamKeys.length === 0
        ? Effect.succeed([])
        : run("XLEN", streamKeys, (c) => Promise.all(streamKeys.map((k) => c.xlen(k)))).pipe(
            // XLEN has no group to miss: a NOGROUP reply would be a bug.
            Effect.catchTag("NotFound", (e) => Effect.die(e))
          )

    /**
     * The length of `family`'s stream in every registered scope (the `scopes` set), sorted by
     * scope: SMEMBERS plus one pipelined XLEN per scope, cheap enough for every metrics scrape.
     */
    const lengthPerScope = (family: ScopedFamily): Effect.Effect<ReadonlyArray<ScopeStreamLength>, WrongType | ConnectionError> =>
      Effect.gen(function* () {
        const scopesKey = yield* Effect.orDie(valkey.key("scopes", {}))
        const scopes = yield* typedCommand(valkey, "SMEMBERS scopes", scopesKey, "set", (c) => c.smembers(scopesKey))
        const rows: Array<{ readonly scope: string; readonly stream: string }> = []
        for (const scope of scopes.sort()) {
          // A registered scope that is no valid key part can hold no stream; it is left out.
          const stream = valkey.keys.key(family, { scope } as KeyParts<typeof family>)
          if (typeof stream === "string") rows.push({ scope, stream })
        }
        const counts = yield* lengths(rows.map((r) => r.stream))
        return rows.map((r, i) => ({ ...r, length: counts[i]! }))
      })

    const deadLetterKey = (kind: string, scope: string) => valkey.key("deadLetterStream", { kind, scope })

    /** Every dead-letter stream of this prefix (optionally of one kind), with its length. A SCAN: for admin use. */
    const listDeadLetters = (kind?: string): Effect.Effect<ReadonlyArray<DeadLetterStreamInfo>, ConnectionError> =>
      command(valkey, "scan dead letters", async (c) => {
          const found = new Set<string>()
          let cursor = "0"
          do {
            const [next, keys] = await c.scan(cursor, "MATCH", valkey.keys.pattern("deadLetterStream"), "COUNT", 1000, "TYPE", "stream")
            cursor = next
            keys.forEach((k) => found.add(k))
          } while (cursor !== "0")
          const keys = [...found].sort()
          const lengths = await Promise.all(keys.map((k) => c.xlen(k)))
          return keys.map((key, i) => ({ key, length: lengths[i]! }))
        })
        .pipe(
          Effect.map((rows) =>
            rows.flatMap(({ key, length }) => {
              const parsed = valkey.keys.parse(key)
              if (parsed?.family !== "deadLetterStream") return []
              const parts = parsed.parts as { readonly kind: string; readonly scope: string }
              return kind === undefined || parts.kind === kind ? [{ key, kind: parts.kind, scope: parts.scope, length }] : []
            })
          )
        )

    /** Dead letters of one kind and scope, oldest first, `count` per page after the id `after`. */
    const readDeadLetters = (
      kind: string,
      scope: string,
      page: { readonly after?: string | undefined; readonly count?: number | undefined } = {}
    ): Effect.Effect<DeadLetterPage, InvalidInput | WrongType | NotFound | ConnectionError> =>
      Effect.gen(function* () {
        yield* Check.count(page.count)
        if (page.after !== undefined) yield* Check.streamId("after", page.after)
        const key = yield* deadLetterKey(kind, scope)
        const count = page.count ?? 100
        const start = page.after === undefined ? "-" : `(${page.after}`
        const raw = yield* run("XRANGE dead letters", [key], (c) => c.call("XRANGE", key, start, "+", "COUNT", count + 1))
        const entries = (raw as ReadonlyArray<unknown>).map(decodeDeadLetter)
        const more = entries.length > count
        const shown = more ? entries.slice(0, count) : entries
        return { entries: shown, next: more ? shown[shown.length - 1]!.id : null }
      })

    return {
      ensureGroup,
      readGroup,
      ack,
      ackAndDelete,
      pending,
      pendingEntries,
      claim,
      autoClaim,
      deadLetter,
      trim,
      lengths,
      lengthPerScope,
      deadLetterKey,
      listDeadLetters,
      readDeadLetters
    } as const
  })
}) {}
