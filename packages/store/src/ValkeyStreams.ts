import type { Redis } from "iovalkey"
import { Effect, Context, Layer } from "effect"
import { autoClaim, claim } from "./StreamClaims.js"
import { ack, ackAndDelete, ensureGroup, type PendingQuery, pending, pendingEntries, type ReadGroupOptions, readGroup } from "./StreamConsumerGroups.js"
import { type DeadLetterMove, deadLetter, deadLetterKey, listDeadLetters, readDeadLetters } from "./StreamDeadLetters.js"
import { lengthPerScope, lengths, type ScopedFamily, trim } from "./StreamSizes.js"
import { Valkey } from "./Valkey.js"

export { autoClaimDeletedCounter } from "./StreamClaims.js"
export type { PendingQuery, ReadGroupOptions } from "./StreamConsumerGroups.js"
export type { DeadLetterMove, DeadLetterOutcome, DeadLetterPage, DeadLetterStreamInfo } from "./StreamDeadLetters.js"
export type { ScopedFamily, ScopeStreamLength } from "./StreamSizes.js"

/**
 * Consumer groups over Valkey streams: group creation,
 * reads, acknowledgement, the pending list, claims of orphans, dead letters and a trim that
 * never removes what some group has not acknowledged. Streams are given as keys built with
 * `valkey.key`; this service does not know which families are streams.
 */
export class ValkeyStreams extends Context.Service<ValkeyStreams>()("@microdcs/store/ValkeyStreams", {
  make: Effect.gen(function* () {
    const valkey = yield* Valkey
    return {
      ensureGroup: (stream: string, group: string, startId?: string) => ensureGroup(valkey, stream, group, startId),
      readGroup: (options: ReadGroupOptions, connection?: Redis) => readGroup(valkey, options, connection),
      ack: (stream: string, group: string, ids: ReadonlyArray<string>) => ack(valkey, stream, group, ids),
      ackAndDelete: (stream: string, group: string, ids: ReadonlyArray<string>) => ackAndDelete(valkey, stream, group, ids),
      pending: (stream: string, group: string) => pending(valkey, stream, group),
      pendingEntries: (stream: string, group: string, query?: PendingQuery) => pendingEntries(valkey, stream, group, query),
      claim: (stream: string, group: string, consumer: string, minIdleMs: number, ids: ReadonlyArray<string>) =>
        claim(valkey, stream, group, consumer, minIdleMs, ids),
      autoClaim: (stream: string, group: string, consumer: string, options: { readonly minIdleMs: number; readonly count?: number | undefined }) =>
        autoClaim(valkey, stream, group, consumer, options),
      deadLetter: (move: DeadLetterMove) => deadLetter(valkey, move),
      trim: (stream: string) => trim(valkey, stream),
      lengths: (streamKeys: ReadonlyArray<string>) => lengths(valkey, streamKeys),
      lengthPerScope: (family: ScopedFamily) => lengthPerScope(valkey, family),
      deadLetterKey: (kind: string, scope: string) => deadLetterKey(valkey, kind, scope),
      listDeadLetters: (kind?: string) => listDeadLetters(valkey, kind),
      readDeadLetters: (kind: string, scope: string, page?: { readonly after?: string | undefined; readonly count?: number | undefined }) =>
        readDeadLetters(valkey, kind, scope, page)
    } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
