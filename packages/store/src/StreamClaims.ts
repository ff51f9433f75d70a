import { Effect, Metric, Option, Stream } from "effect"
import type { ConnectionError, InvalidInput, NotFound, WrongType } from "./Errors.js"
import { runStream } from "./StreamCommand.js"
import { type ClaimPage, decodeAutoClaim, decodeEntries, decodePendingEntries, type StreamEntry } from "./StreamEntries.js"
import * as Check from "./StreamInput.js"
import type { ValkeyService } from "./Valkey.js"

/** Pending ids whose entries were deleted before anyone acknowledged them (counted, never silent). */
export const autoClaimDeletedCounter = Metric.counter("microdcs_stream_autoclaim_deleted_total", {
  description: "pending stream entries found deleted by XAUTOCLAIM (trimmed or XDEL'd before acknowledgement)"
})

/**
 * XCLAIM: takes `ids` for `consumer` if they are still idle at least `minIdleMs` (so of two
 * claimers only one wins). Each claim counts as a delivery. Deleted entries are not returned.
 */
export const claim = (valkey: ValkeyService, stream: string, group: string, consumer: string, minIdleMs: number, ids: ReadonlyArray<string>) =>
  ids.length === 0
    ? Effect.succeed([] as ReadonlyArray<StreamEntry>)
    : runStream(valkey, "XCLAIM", [stream], (c) => c.call("XCLAIM", stream, group, consumer, Math.max(0, Math.floor(minIdleMs)), ...ids)).pipe(
        Effect.map((raw): ReadonlyArray<StreamEntry> => decodeEntries("XCLAIM", raw))
      )

/** Delivery counts of freshly claimed entries (XAUTOCLAIM does not report them); one round trip. */
const deliveries = (valkey: ValkeyService, stream: string, group: string, entries: ReadonlyArray<StreamEntry>) =>
  runStream(valkey, "XPENDING", [stream], (c) => Promise.all(entries.map((e) => c.call("XPENDING", stream, group, e.id, e.id, 1)))).pipe(
    Effect.map((rows) => entries.map((e, i) => ({ ...e, deliveries: decodePendingEntries(rows[i])[0]?.deliveries ?? 1 })))
  )

const claimPage = (valkey: ValkeyService, stream: string, group: string, consumer: string, minIdleMs: number, cursor: string, count: number) =>
  Effect.gen(function* () {
    const raw = yield* runStream(valkey, "XAUTOCLAIM", [stream], (c) =>
      c.call("XAUTOCLAIM", stream, group, consumer, Math.max(0, Math.floor(minIdleMs)), cursor, "COUNT", count)
    )
    const page = decodeAutoClaim(raw)
    if (page.deletedIds.length > 0) {
      yield* Metric.update(Metric.withAttributes(autoClaimDeletedCounter, { group }), page.deletedIds.length)
      yield* Effect.logWarning("XAUTOCLAIM: pending entries were deleted before acknowledgement").pipe(
        Effect.annotateLogs({ stream, group, count: page.deletedIds.length, ids: page.deletedIds.slice(0, 20).join(",") })
      )
    }
    const entries = yield* deliveries(valkey, stream, group, page.entries)
    return { stream, cursor: page.cursor, entries, deletedIds: page.deletedIds } satisfies ClaimPage
  })

/**
 * Takes over every entry pending longer than `minIdleMs` on any consumer (orphans of a dead
 * one), page by page from cursor 0-0 until the server returns 0-0 again. Each page is claimed
 * only when the stream pulls it, so a consumer can handle a page before claiming the next.
 * Deleted ids in a reply are logged and counted and reported in `deletedIds`.
 */
export const autoClaim = (
  valkey: ValkeyService,
  stream: string,
  group: string,
  consumer: string,
  options: { readonly minIdleMs: number; readonly count?: number | undefined }
): Stream.Stream<ClaimPage, NotFound | WrongType | InvalidInput | ConnectionError> =>
  Stream.unwrap(
    Check.count(options.count).pipe(
      Effect.as(
        Stream.paginate("0-0", (cursor: string) =>
          claimPage(valkey, stream, group, consumer, options.minIdleMs, cursor, options.count ?? 100).pipe(
            Effect.map((page) => [[page], page.cursor === "0-0" ? Option.none<string>() : Option.some(page.cursor)] as const)
          )
        )
      )
    )
  )
