import { Data, Effect, Layer, Queue } from "effect"
import { randomPrefix, startScoped } from "@microdcs/test-utils"
import { testValkey } from "@microdcs/testkit"
import { Valkey, ValkeyStreams } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { makePoller, type PollerEntry, type PollerOptions } from "@microdcs/poller"

/** Shared pieces of the poller tests (not a test file itself). */

// Shared with the other packages' tests: repeats an effect until a check holds, failing after a deadline.
export { until } from "@microdcs/test-utils"

/** Each test gets its own prefix, so pollers of different tests never see each other's scopes. */
export const freshLayer = (prefix = randomPrefix("poller")) =>
  ValkeyStreams.Default.pipe(Layer.provideMerge(testValkey({ prefix })))

export const base = {
  kind: "sfc",
  stream: "sfcWork",
  group: "engine",
  consumer: "c1",
  fallbackIntervalMs: 5000,
  claimIdleMs: 10_000,
  backoff: { initialMs: 20, maxMs: 50 }
} as const

export class Boom extends Data.TaggedError("Boom")<{ readonly message: string }> {}

/** What the SFC CAS script does: XADD, register the scope, PUBLISH the nudge. */
export const append = (scope: string, fields: Record<string, string>, how: { readonly register?: boolean; readonly nudge?: boolean } = {}) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const stream = yield* valkey.key("sfcWork", { scope })
    const scopes = yield* valkey.key("scopes", {})
    const channel = yield* valkey.key("nudge", { kind: "sfc" })
    const id = yield* unsafeCommand(valkey, "xadd", (c) => c.xadd(stream, "*", ...Object.entries(fields).flat()) as Promise<string>)
    if (how.register ?? true) yield* unsafeCommand(valkey, "sadd", (c) => c.sadd(scopes, scope))
    if (how.nudge ?? true) yield* unsafeCommand(valkey, "publish", (c) => c.publish(channel, scope))
    return id
  })

export const register = (scope: string) =>
  Effect.flatMap(Valkey, (v) => v.key("scopes", {}).pipe(Effect.flatMap((k) => unsafeCommand(v, "sadd", (c) => c.sadd(k, scope)))))

/** Starts a poller in a scope of its own, so a test can shut it down in the middle. */
export const start = <E>(options: PollerOptions<E, never>) =>
  Effect.map(startScoped(makePoller(options)), ({ value, stop }) => ({ poller: value, stop }))

/** A handler that records every delivery on a queue. */
export const recorder = Effect.gen(function* () {
  const seen = yield* Queue.unbounded<PollerEntry>()
  return { seen, handler: (entry: PollerEntry) => Queue.offer(seen, entry).pipe(Effect.asVoid) }
})

export const pendingCount = (scope: string, group = "engine") =>
  Effect.gen(function* () {
    const stream = yield* Effect.flatMap(Valkey, (v) => v.key("sfcWork", { scope }))
    return (yield* Effect.flatMap(ValkeyStreams, (s) => s.pending(stream, group))).count
  })

/** Ids left in a scope's work stream, oldest first. */
export const streamIds = (scope: string, family: "sfcWork" | "changes" = "sfcWork") =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const stream = yield* valkey.key(family, { scope })
    return (yield* unsafeCommand(valkey, "xrange", (c) => c.xrange(stream, "-", "+"))).map((r) => r[0])
  })

export const elapsedSince = (t0: number) => Date.now() - t0
