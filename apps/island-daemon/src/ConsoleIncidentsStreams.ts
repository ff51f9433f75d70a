import { Effect } from "effect"
import { ConsumerHeartbeats, newestDeadLetters, SCOPE_STREAMS, StreamSummaries, Valkey, ValkeyStreams } from "@microdcs/store"
import { afterCursor, consoleLink, type Incident, type SourceRequest, sourceCursor } from "./ConsoleIncident.js"

/**
 * The stream sources of the incident view, over every scope stream (SCOPE_STREAMS) of the scopes
 * asked: dead letters (newest first from each dead-letter stream), held requests (entries
 * delivered to a live consumer and unacknowledged for longer than {@link HELD_AFTER_MS}) and lost
 * leases (consumers holding pending entries whose heartbeat is gone). Every read is bounded by
 * the page size, per stream and group.
 */

/** An entry a live consumer has held this long without acknowledging it is a held request. */
export const HELD_AFTER_MS = 60_000

const deadLetterIncidents = (request: SourceRequest, kind: string, scope: string) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const from = sourceCursor(request.cursor, "dead-letter", scope)
    // A cursor taking none of its millisecond reads from the one before; ties are sorted out below.
    const atOrBefore = from === undefined ? undefined : from.id === "" ? from.at - 1 : from.at
    const entries = yield* newestDeadLetters(valkey, kind, scope, { atOrBefore, count: Math.min(request.limit + 16, 1000) }).pipe(
      Effect.catchTag("NotFound", () => Effect.succeed([]))
    )
    return entries.map(
      (entry): Incident => ({
        kind: "dead-letter",
        scope,
        id: `${kind}/${entry.id}`,
        at: entry.movedAt,
        title: `Dead letter on the ${kind} stream (entry ${entry.originalId}, group ${entry.group}, ${entry.deliveries} deliveries)`,
        reason: entry.error,
        action: { kind: "redrive", target: { scope, stream: kind, id: entry.id }, label: "Redrive the dead letter" },
        link: consoleLink.streams(scope)
      })
    )
  })

interface GroupRef {
  readonly scope: string
  readonly kind: string
  readonly stream: string
  readonly group: string
}

/** The time in a stream entry id (`ms-seq`): a time that stays the same from one read to the next, unlike one derived from an idle time. */
const idTime = (id: string) => Number(id.split("-")[0])

/** The oldest entry a consumer left pending: when what it holds was added. */
const oldestPending = (ref: GroupRef, consumer: string) =>
  Effect.flatMap(ValkeyStreams, (streams) => streams.pendingEntries(ref.stream, ref.group, { consumer, count: 1 })).pipe(
    Effect.map((entries) => entries[0]),
    Effect.catchTag("NotFound", () => Effect.succeed(undefined))
  )

/** Consumers gone (no heartbeat) with entries pending, each dated by its oldest pending entry. */
const lostConsumers = (ref: GroupRef) =>
  Effect.gen(function* () {
    const summaries = yield* StreamSummaries
    const consumers = (yield* summaries.consumers(ref.stream, ref.group)).filter((c) => c.pending > 0)
    if (consumers.length === 0) return { dead: new Set<string>(), lost: [] }
    const beats = yield* Effect.flatMap(ConsumerHeartbeats, (h) => h.of({ kind: ref.kind, group: ref.group, consumer: "incident-view" }, 1))
    const dead = new Set(yield* beats.dead(consumers.map((c) => c.name)))
    const lost = yield* Effect.forEach(consumers.filter((c) => dead.has(c.name)), (c) =>
      Effect.map(oldestPending(ref, c.name), (oldest): Incident => ({
        kind: "lost-lease",
        scope: ref.scope,
        id: `${ref.kind}/${ref.group}/${c.name}`,
        at: oldest === undefined ? 0 : idTime(oldest.id),
        title: `Consumer ${c.name} of ${ref.kind}/${ref.group} stopped heartbeating with ${c.pending} entries pending`,
        reason: `no heartbeat; last active ${Math.round(c.idleMs / 1000)} s ago`,
        action: { kind: "reclaim", target: { scope: ref.scope, stream: ref.kind, group: ref.group, consumer: c.name }, label: "Hand its pending entries to a live consumer" },
        link: consoleLink.streams(ref.scope)
      }))
    )
    return { dead, lost }
  })

/** Pending entries of live consumers held past {@link HELD_AFTER_MS}, and consumers gone with entries pending. */
const groupIncidents = (request: SourceRequest, ref: GroupRef) =>
  Effect.gen(function* () {
    const { dead, lost } = yield* lostConsumers(ref)
    const streams = yield* ValkeyStreams
    // XPENDING lists the oldest first: past `limit` held entries in one group, the newer ones wait their turn.
    const held = yield* streams.pendingEntries(ref.stream, ref.group, { minIdleMs: HELD_AFTER_MS, count: Math.min(request.limit, 1000) }).pipe(
      Effect.catchTag("NotFound", () => Effect.succeed([]))
    )
    const heldIncidents = held.filter((e) => !dead.has(e.consumer)).map((e): Incident => ({
      kind: "held-request",
      scope: ref.scope,
      id: `${ref.kind}/${ref.group}/${e.id}`,
      at: idTime(e.id),
      title: `Entry ${e.id} of the ${ref.kind} stream held by ${e.consumer} (${e.deliveries} deliveries)`,
      reason: `unacknowledged for ${Math.round(e.idleMs / 1000)} s`,
      action: { kind: "reclaim", target: { scope: ref.scope, stream: ref.kind, group: ref.group, id: e.id }, label: "Hand the entry to a live consumer" },
      link: consoleLink.streams(ref.scope)
    }))
    return [...lost, ...heldIncidents]
  })

/** Every stream source, for the kinds asked. */
export const streamIncidents = (request: SourceRequest, kinds: ReadonlySet<string>) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const summaries = yield* StreamSummaries
    const pairs = request.scopes.flatMap((scope) => SCOPE_STREAMS.map((s) => ({ scope, ...s })))
    const lists = yield* Effect.forEach(pairs, ({ scope, kind, family }) =>
      Effect.gen(function* () {
        const dead = kinds.has("dead-letter") ? yield* deadLetterIncidents(request, kind, scope) : []
        if (!kinds.has("held-request") && !kinds.has("lost-lease")) return dead
        const stream = yield* valkey.key(family, { scope })
        const groups = (yield* summaries.summary(stream)).groups
        const byGroup = yield* Effect.forEach(groups.filter((g) => g.pending > 0), (g) => groupIncidents(request, { scope, kind, stream, group: g.group }))
        return [...dead, ...byGroup.flat()]
      }),
      // Independent reads: in flight together, one round trip's wait for all of them.
      { concurrency: 8 }
    )
    return lists.flat().filter((item) => kinds.has(item.kind) && afterCursor(request.cursor, item))
  })
