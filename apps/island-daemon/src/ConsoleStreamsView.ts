import { Effect } from "effect"
import { SCOPE_STREAMS, ScopeRegistry, StreamSummaries, Valkey, ValkeyStreams } from "@microdcs/store"

/** Dead letters shown per stream (the newest page is the admin CLI's job). */
const SHOWN_DEAD_LETTERS = 50

/**
 * The streams page: per scope and stream its length, its groups with lag and
 * pending entries by consumer, and its dead letters with the error each one failed with.
 */
export const streamsView = Effect.gen(function* () {
  const valkey = yield* Valkey
  const summaries = yield* StreamSummaries
  const streams = yield* ValkeyStreams
  const scopes = [...(yield* Effect.flatMap(ScopeRegistry, (r) => r.list))].sort()
  const rows = yield* Effect.forEach(scopes, (scope) =>
    Effect.forEach(SCOPE_STREAMS, ({ kind, family }) =>
      Effect.gen(function* () {
        const key = yield* valkey.key(family, { scope })
        const summary = yield* summaries.summary(key)
        const groups = yield* Effect.forEach(summary.groups, (group) =>
          streams.pending(key, group.group).pipe(
            Effect.map((pending) => ({ ...group, pendingByConsumer: pending.consumers })),
            // A group deleted between the two reads has nothing pending.
            Effect.catchTag("NotFound", () => Effect.succeed({ ...group, pendingByConsumer: [] as ReadonlyArray<{ readonly consumer: string; readonly count: number }> }))
          )
        )
        const deadKey = yield* streams.deadLetterKey(kind, scope)
        const deadLength = (yield* streams.lengths([deadKey]))[0] ?? 0
        const dead =
          deadLength === 0
            ? []
            : (yield* streams.readDeadLetters(kind, scope, { count: SHOWN_DEAD_LETTERS }).pipe(Effect.catchTag("NotFound", () => Effect.succeed({ entries: [], next: null })))).entries
        return {
          scope,
          stream: kind,
          key,
          type: summary.type,
          length: summary.length,
          firstId: summary.firstId,
          lastId: summary.lastId,
          groups,
          deadLetters: { length: deadLength, entries: dead.map((d) => ({ id: d.id, originalId: d.originalId, group: d.group, consumer: d.consumer, deliveries: d.deliveries, error: d.error, movedAt: d.movedAt, fields: d.fields })) }
        }
      })
    )
  )
  return { streams: rows.flat() }
})
