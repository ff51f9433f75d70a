import { Effect } from "effect"
import { SCOPE_STREAMS, ScopeRegistry, type ScopeStreamName, type StreamGroup, StreamSummaries, Valkey } from "@microdcs/store"

/**
 * Reads of the island's streams for `streams info` and `streams pending`. Per scope there are
 * three (the store's `SCOPE_STREAMS`): `changes:{scope}` (the change log the publisher and the
 * engine follow), `sfc:work:{scope}` (the engine's work queue) and `dag:commits:{scope}` (the
 * execution log's commit requests). They are named by their dead-letter kind.
 */
export const streamKinds: ReadonlyArray<ScopeStreamName> = SCOPE_STREAMS.map((s) => s.kind)
export type StreamKind = ScopeStreamName

export type GroupInfo = StreamGroup

export interface StreamInfo {
  readonly scope: string
  readonly kind: StreamKind
  readonly key: string
  /** `stream`, `none` (not created yet) or the wrong type a corrupted key holds. */
  readonly type: string
  readonly length: number
  readonly firstId: string | null
  readonly lastId: string | null
  readonly groups: ReadonlyArray<GroupInfo>
}

export const streamKey = (kind: StreamKind, scope: string) =>
  Effect.flatMap(Valkey, (valkey) => valkey.key(SCOPE_STREAMS.find((s) => s.kind === kind)!.family, { scope }))

/** The stream's summary (one pipelined round trip), tagged with the scope and kind it belongs to. */
export const streamInfo = (kind: StreamKind, scope: string) =>
  Effect.gen(function* () {
    const key = yield* streamKey(kind, scope)
    const summary = yield* (yield* StreamSummaries).summary(key)
    return { scope, kind, ...summary } satisfies StreamInfo
  })

/** The scope given, or every registered scope. */
export const scopesOrAll = (scope: string | undefined) =>
  scope !== undefined ? Effect.succeed([scope]) : Effect.flatMap(ScopeRegistry, (registry) => registry.list)
