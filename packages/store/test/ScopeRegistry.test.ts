import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Queue, Stream } from "effect"
import { inject } from "vitest"
import { randomPrefix, until } from "@microdcs/test-utils"
import { ReferenceListDao, ScopeRegistry, Valkey, ValkeyLayer, type WatchOptions } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"

// A fresh prefix per test: the registry is one set per island, and each test wants its own.
const layerFor = (prefix: string) =>
  Layer.mergeAll(ScopeRegistry.Default, ReferenceListDao.Default).pipe(
    Layer.provideMerge(ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix }))
  )

/** Runs `watch` in the test's scope and hands back its elements one by one (bounded waits). */
const watching = (options: WatchOptions) =>
  Effect.gen(function* () {
    const registry = yield* ScopeRegistry
    const seen = yield* Queue.unbounded<string>()
    yield* registry.watch(options).pipe(Stream.runForEach((scope) => Queue.offer(seen, scope)), Effect.forkScoped)
    return {
      next: Queue.take(seen).pipe(Effect.timeoutOrElse({ duration: "5 seconds", orElse: () => Effect.fail(new Error("no scope discovered")) })),
      pending: Queue.clear(seen)
    }
  })

const addScope = (scope: string, nudge: boolean) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    yield* unsafeCommand(valkey, "sadd", (c) => c.sadd(valkey.keys.key("scopes", {}) as string, scope))
    if (nudge) yield* unsafeCommand(valkey, "publish", (c) => c.publish(valkey.keys.key("nudge", { kind: "changes" }) as string, scope))
  })

describe("ScopeRegistry", () => {
  it.effect("lists every registered scope, sorted", () =>
    Effect.gen(function* () {
      const registry = yield* ScopeRegistry
      expect(yield* registry.list).toEqual([])
      for (const scope of ["b", "a:1", "Ω", "a"]) yield* addScope(scope, false)
      expect(yield* registry.list).toEqual(["a", "a:1", "b", "Ω"])
    }).pipe(Effect.provide(layerFor(randomPrefix())))
  )

  it.live("watch emits the known scopes, then a new one at once on a nudge", () =>
    Effect.gen(function* () {
      yield* addScope("known-2", false)
      yield* addScope("known-1", false)
      // Polling is an hour away: only the nudge can make the new scope show up in time.
      const watch = yield* watching({ pollInterval: "1 hour" })
      expect([yield* watch.next, yield* watch.next]).toEqual(["known-1", "known-2"])
      yield* addScope("nudged", true)
      expect(yield* watch.next).toBe("nudged")
      // The reference-list script registers and nudges in one step.
      yield* (yield* ReferenceListDao).add("equipment", "via-refs", ["e1"])
      expect(yield* watch.next).toBe("via-refs")
      // A nudge for a known scope is no discovery.
      yield* addScope("known-1", true)
      yield* addScope("later", true)
      expect(yield* watch.next).toBe("later")
    }).pipe(Effect.scoped, Effect.provide(layerFor(randomPrefix())))
  )

  it.live("watch finds a scope whose nudge was lost, by the periodic read", () =>
    Effect.gen(function* () {
      yield* addScope("first", false)
      const watch = yield* watching({ pollInterval: "20 millis" })
      expect(yield* watch.next).toBe("first")
      yield* addScope("silent", false)
      expect(yield* watch.next).toBe("silent")
      yield* addScope("silent-2", false)
      expect(yield* watch.next).toBe("silent-2")
      // Every scope is emitted once, however many rounds ran.
      yield* Effect.sleep("100 millis")
      expect([...(yield* watch.pending)]).toEqual([])
    }).pipe(Effect.scoped, Effect.provide(layerFor(randomPrefix())))
  )

  it.live("watch on an empty registry emits nothing until a scope appears", () =>
    Effect.gen(function* () {
      const watch = yield* watching({ pollInterval: "1 hour" })
      // Nothing is emitted to tell us the subscription is up, so ask the server.
      const valkey = yield* Valkey
      const channel = valkey.keys.key("nudge", { kind: "changes" }) as string
      yield* until(unsafeCommand(valkey, "numsub", (c) => c.pubsub("NUMSUB", channel) as Promise<[string, number]>), ([, n]) => Number(n) >= 1, {
        within: "5 seconds",
        every: "10 millis"
      })
      yield* addScope("only", true)
      expect(yield* watch.next).toBe("only")
    }).pipe(Effect.scoped, Effect.provide(layerFor(randomPrefix())))
  )

  it.live("closing the watch's scope closes its subscriber connection", () =>
    Effect.gen(function* () {
      const valkey = yield* Valkey
      yield* addScope("s", false)
      const watchers = unsafeCommand(valkey, "client list", (c) => c.client("LIST") as Promise<string>)
        .pipe(Effect.map((list) => list.split("\n").filter((line) => / name=scope-watch /.test(line)).length))
      const before = yield* watchers
      yield* Effect.scoped(
        Effect.gen(function* () {
          const watch = yield* watching({ pollInterval: "1 hour" })
          expect(yield* watch.next).toBe("s")
          expect(yield* watchers).toBe(before + 1)
        })
      )
      expect(yield* watchers).toBe(before)
    }).pipe(Effect.provide(layerFor(randomPrefix())))
  )

  it.live("a registry of another type fails the watch at start with WrongType", () =>
    Effect.gen(function* () {
      const registry = yield* ScopeRegistry
      const valkey = yield* Valkey
      yield* unsafeCommand(valkey, "corrupt", (c) => c.set(valkey.keys.key("scopes", {}) as string, "x"))
      expect(yield* Effect.flip(registry.list)).toMatchObject({ _tag: "WrongType", expected: "set", actual: "string" })
      const failed = yield* Effect.flip(registry.watch({ pollInterval: "1 hour" }).pipe(Stream.runCollect))
      expect(failed).toMatchObject({ _tag: "WrongType" })
    }).pipe(Effect.provide(layerFor(randomPrefix())))
  )
})
