import { Effect } from "effect"
import type { ConnectionError } from "./Errors.js"
import { decodeStreamGroups, type StreamGroup } from "./StreamGroups.js"
import { Valkey } from "./Valkey.js"

export interface StreamSummary {
  readonly key: string
  /** `stream`, `none` (not created yet) or the wrong type a corrupted key holds. */
  readonly type: string
  readonly length: number
  readonly firstId: string | null
  readonly lastId: string | null
  readonly groups: ReadonlyArray<StreamGroup>
}

type RawEntries = ReadonlyArray<readonly [string, unknown]>

/**
 * One stream at a glance (admin CLI `streams info`): its type, length, first and last id and
 * its consumer groups. A missing key or one of another type is reported as such, not failed:
 * the operator looks at the stream because something may be wrong with it.
 */
export class StreamSummaries extends Effect.Service<StreamSummaries>()("@microdcs/store/StreamSummaries", {
  effect: Effect.gen(function* () {
    const valkey = yield* Valkey

    /**
     * One pipelined round trip. TYPE decides how to read the rest: on a missing key or one of
     * another type the stream commands fail, and those failures are expected, not errors.
     * `stream` is a key built with `valkey.key`, as for {@link ValkeyStreams}.
     */
    const summary = (stream: string): Effect.Effect<StreamSummary, ConnectionError> =>
      Effect.gen(function* () {
        const replies = yield* valkey.command("stream summary", async (c) => {
          const pipeline = c
            .pipeline()
            .type(stream)
            .xlen(stream)
            .call("XINFO", "GROUPS", stream)
            .xrange(stream, "-", "+", "COUNT", 1)
            .xrevrange(stream, "+", "-", "COUNT", 1)
          return (await pipeline.exec()) ?? []
        })
        const reply = (i: number): unknown => (replies[i]?.[0] ? undefined : replies[i]?.[1])
        const type = String(reply(0) ?? "none")
        if (type !== "stream") return { key: stream, type, length: 0, firstId: null, lastId: null, groups: [] } satisfies StreamSummary
        return {
          key: stream,
          type,
          length: Number(reply(1) ?? 0),
          firstId: (reply(3) as RawEntries | undefined)?.[0]?.[0] ?? null,
          lastId: (reply(4) as RawEntries | undefined)?.[0]?.[0] ?? null,
          groups: decodeStreamGroups(reply(2))
        } satisfies StreamSummary
      })

    return { summary } as const
  })
}) {}
