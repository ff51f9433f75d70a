import { Effect, Context, Layer } from "effect"
import type { ConnectionError } from "./Errors.js"
import { isReplyError } from "./FailureKind.js"
import { Valkey } from "./Valkey.js"
import { command } from "./RawDoor.js"

/** One lease key as the operator sees it. */
export interface LeaseRow {
  readonly lease: "publisher" | "start"
  /** The configuration id of a start lease; null for the publisher lease. */
  readonly configId: string | null
  readonly key: string
  /** The holder id; null when the lease is free (or the key holds another type, see `wrongType`). */
  readonly holder: string | null
  /** The key holds another Valkey type than a lease's string: a corrupted key. */
  readonly wrongType: boolean
  /** Time left on the lease; null when free (or without TTL). */
  readonly remainingMs: number | null
}

type Reply = [Error | null, unknown]

const isWrongType = (error: Error): boolean => isReplyError(error) && error.message.startsWith("WRONGTYPE")

/**
 * Every lease of the island at a glance (admin CLI `leases show`): the publisher lease and each
 * post-start lease ({@link PublisherLease}, {@link StartLease}), with holder and time left. A
 * corrupted key is shown as such, not failed: the listing is how the operator finds it.
 */
export class LeaseOverview extends Context.Service<LeaseOverview>()("@microdcs/store/LeaseOverview", {
  make: Effect.gen(function* () {
    const valkey = yield* Valkey
    const publisherKey = yield* Effect.orDie(valkey.key("publisherLease", {}))
    const startPattern = valkey.keys.pattern("startLease")

    /** Every start lease key of this prefix: a SCAN, never KEYS, so a large island is not blocked. */
    const startLeaseKeys = command(valkey, "scan start leases", async (c) => {
        const found = new Set<string>()
        let cursor = "0"
        do {
          const [next, batch] = await c.scan(cursor, "MATCH", startPattern, "COUNT", 1000)
          cursor = next
          batch.forEach((k) => found.add(k))
        } while (cursor !== "0")
        return [...found].sort()
      })
      .pipe(
        Effect.map((keys) =>
          keys.flatMap((key) => {
            const parsed = valkey.keys.parse(key)
            return parsed?.family === "startLease" ? [{ lease: "start" as const, configId: (parsed.parts as { configId: string }).configId, key }] : []
          })
        )
      )

    /** The publisher lease first, then every post-start lease by key; holders and TTLs in one round trip. */
    const list: Effect.Effect<ReadonlyArray<LeaseRow>, ConnectionError> = Effect.gen(function* () {
      const leases = [{ lease: "publisher" as const, configId: null, key: publisherKey }, ...(yield* startLeaseKeys)]
      const replies = yield* command(valkey, "read leases", async (c) => {
        const pipeline = c.pipeline()
        for (const l of leases) pipeline.get(l.key).pttl(l.key)
        const results = ((await pipeline.exec()) ?? []) as Array<Reply>
        // A corrupted key is part of the answer; any other refusal (NOPERM, ...) fails the read.
        const refusal = results.find(([error]) => error !== null && !isWrongType(error))
        if (refusal) throw refusal[0]
        return results
      })
      return leases.map((l, i): LeaseRow => {
        const [holderError, holder] = replies[i * 2] ?? [null, null]
        const ttl = Number(replies[i * 2 + 1]?.[1] ?? -2)
        return {
          ...l,
          holder: holderError ? null : ((holder as string | null) ?? null),
          wrongType: holderError !== null,
          remainingMs: ttl >= 0 ? ttl : null
        }
      })
    })

    return { list } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
