import { Effect, Context, Layer } from "effect"
import type { ConnectionError } from "./Errors.js"
import { decodeStreamGroups, type StreamGroup } from "./StreamGroups.js"
import { Valkey } from "./Valkey.js"
import { command } from "./RawDoor.js"

export interface StreamSummary {
  readonly key: string
  /** `stream`, `none` (not created yet) or the wrong type a corrupted key holds. */
  readonly type: string
  readonly length: number
  readonly firstId: string | null
  readonly lastId: string | null
  readonly groups: ReadonlyArray<StreamGroup>
}

/** One consumer of a group, as `XINFO CONSUMERS` describes it. */
export interface StreamConsumer {
  readonly name: string
  readonly pending: number
  readonly idleMs: number
}

type RawEntries = ReadonlyArray<readonly [string, unknown]>

/** Decodes an `XINFO CONSUMERS` reply (a list of flat field/value lists); anything else is no consumers. */
const decodeConsumers = (reply: unknown): ReadonlyArray<StreamConsumer> =>
  Array.isArray(reply)
    ? reply.flatMap((row: unknown) => {
        if (!Array.isArray(row)) return []
        const fields = new Map<string, unknown>()
        for (let i = 0; i + 1 < row.length; i += 2) fields.set(String(row[i]), row[i + 1])
        return [{ name: String(fields.get("name") ?? ""), pending: Number(fields.get("pending") ?? 0), idleMs: Number(fields.get("idle") ?? 0) }]
      })
    : []

/**
 * One stream at a glance (admin CLI `streams info`): its type, length, first and last id and
 * its consumer groups. A missing key or one of another type is reported as such, not failed:
 * the operator looks at the stream because something may be wrong with it.
 */
export class StreamSummaries extends Context.Service<StreamSummaries>()("@microdcs/store/StreamSummaries", {
  make: Effect.gen(function* () {
    const valkey = yield* Valkey

    /**
     * One pipelined round trip. TYPE decides how to read the rest: on a missing key or one of
     * another type the stream commands fail, and those failures are expected, not errors.
     * `stream` is a key built with `valkey.key`, as for {@link ValkeyStreams}.
     */
    const summary = (stream: string): Effect.Effect<StreamSummary, ConnectionError> =>
      Effect.gen(function* () {
        const replies = yield* command(valkey, "stream summary", async (c) => {
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

    /**
     * The consumers of one group with their pending entries and idle time (the console's engine
     * instances). A missing stream or group has no consumers: it is reported, not failed.
     */
    const consumers = (stream: string, group: string): Effect.Effect<ReadonlyArray<StreamConsumer>, ConnectionError> =>
      command(valkey, "stream consumers", (c) => c.xinfo("CONSUMERS", stream, group).catch(() => []))
        .pipe(Effect.map(decodeConsumers))

    return { summary, consumers } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
