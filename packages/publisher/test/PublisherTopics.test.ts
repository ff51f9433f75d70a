import { describe, expect, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { jobTopic, publisherDefaults, publisherFilter, resolvePublisherOptions, stateIndexPageTopic, stateIndexTopic } from "@microdcs/publisher"

const plain = { prefix: "microdcs", discriminator: undefined }
const island = { prefix: "plant/area", discriminator: "island-1" }

describe("publisher topics", () => {
  it("puts the discriminator after the prefix, like the binding's metadata topic", () => {
    expect(jobTopic(plain, "order", "line-1", "jo-1")).toEqual(Result.succeed("microdcs/line-1/order/jo-1"))
    expect(jobTopic(island, "result", "line-1", "jo-1")).toEqual(Result.succeed("plant/area/island-1/line-1/result/jo-1"))
    expect(stateIndexTopic(island, "line-1")).toEqual(Result.succeed("plant/area/island-1/line-1/state-index"))
    expect(stateIndexPageTopic(island, "line-1", 3)).toEqual(Result.succeed("plant/area/island-1/line-1/state-index/3"))
    expect(publisherFilter(island)).toBe("plant/area/island-1/#")
    expect(publisherFilter(plain)).toBe("microdcs/#")
  })

  it("gives a scope or id that is not exactly one clean level no topic", () => {
    for (const [scope, id] of [["line/1", "jo"], ["line-1", "jo/1"], ["+", "jo"], ["line-1", "#"], ["$sys", "jo"], ["line-1", ""], ["a\u0000", "jo"]]) {
      const topic = jobTopic(plain, "order", scope!, id!)
      expect(Result.isFailure(topic) && topic.failure._tag).toBe("InvalidTopic")
    }
    expect(Result.isFailure(stateIndexTopic(plain, "a+b"))).toBe(true)
  })
})

describe("publisher options", () => {
  it.effect("fills in the defaults: 48 h expiry, renew and retry at a third of the TTL", () =>
    Effect.gen(function* () {
      const resolved = yield* resolvePublisherOptions({ instanceId: "i-1" })
      expect(resolved).toEqual({
        prefix: publisherDefaults.prefix,
        discriminator: undefined,
        source: publisherDefaults.source,
        instanceId: "i-1",
        leaseTtlMs: 15_000,
        renewIntervalMs: 5000,
        acquireIntervalMs: 5000,
        batchSize: 100,
        messageExpirySeconds: 172_800,
        fallbackIntervalMs: 1000,
        scopeConcurrency: 4,
        maxPayloadBytes: 262_144,
        stateIndexIntervalMs: 1000
      })
      expect((yield* resolvePublisherOptions()).instanceId).toMatch(/-\d+-[0-9a-f]{6}$/)
    })
  )

  it.effect("refuses bad values with InvalidInput naming the option", () =>
    Effect.gen(function* () {
      const field = (options: Parameters<typeof resolvePublisherOptions>[0]) =>
        resolvePublisherOptions(options).pipe(
          Effect.flip,
          Effect.map((e) => e.field)
        )
      expect(yield* field({ prefix: "" })).toBe("prefix")
      expect(yield* field({ prefix: "$SYS" })).toBe("prefix")
      expect(yield* field({ discriminator: "a#" })).toBe("discriminator")
      expect(yield* field({ messageExpirySeconds: 0 })).toBe("messageExpirySeconds")
      expect(yield* field({ messageExpirySeconds: 1.5 })).toBe("messageExpirySeconds")
      expect(yield* field({ batchSize: 10_001 })).toBe("batchSize")
      expect(yield* field({ fallbackIntervalMs: -1 })).toBe("fallbackIntervalMs")
      expect(yield* field({ acquireIntervalMs: 0 })).toBe("acquireIntervalMs")
      expect(yield* field({ scopeConcurrency: 0 })).toBe("scopeConcurrency")
      expect(yield* field({ source: "" })).toBe("source")
      expect(yield* field({ maxPayloadBytes: 1023 })).toBe("maxPayloadBytes")
      expect(yield* field({ maxPayloadBytes: 268_435_456 })).toBe("maxPayloadBytes")
    })
  )
})
