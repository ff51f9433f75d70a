import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import fc from "fast-check"
import {
  commandFilters,
  commandTopic,
  eventsTopic,
  metadataTopic,
  parseEventType,
  responseTopic,
  scopeOf,
  sharedCommandFilters,
  topicMatches,
  uniqueClientId,
  validateFilter,
  validateTopicName
} from "@microdcs/cloudevents-mqtt"

const failure = <A>(result: Result.Result<A, { part: string; _tag: string }>) =>
  Result.isFailure(result) ? { tag: result.failure._tag, part: result.failure.part } : "ok"

describe("topics", () => {
  const config = { prefix: "plant/island", discriminator: "d1", wildcardLevels: 2 }

  it("derives command filters, shared filters, events, metadata and reply topics", () => {
    expect(Result.getOrThrow(commandFilters(config))).toEqual(["plant/island/d1/commands", "plant/island/+/d1/commands", "plant/island/+/+/d1/commands"])
    expect(Result.getOrThrow(commandFilters({ prefix: "p" }))).toEqual(["p/commands"])
    expect(Result.getOrThrow(sharedCommandFilters({ prefix: "p", wildcardLevels: 1 }, "g"))).toEqual(["$share/g/p/commands", "$share/g/p/+/commands"])
    expect(Result.getOrThrow(eventsTopic(config, "line-1.cell-2"))).toBe("plant/island/line-1/cell-2/d1/events")
    expect(Result.getOrThrow(eventsTopic({ prefix: "p" }, "line-1"))).toBe("p/line-1/events")
    expect(Result.getOrThrow(metadataTopic(config))).toBe("plant/island/d1/metadata")
    expect(Result.getOrThrow(metadataTopic({ prefix: "p" }))).toBe("p/metadata")
    expect(Result.getOrThrow(responseTopic(config, "instance-7"))).toBe("plant/island/replies/instance-7")
    // An MES's command topic for a scope, which the filter with one wildcard level takes.
    expect(Result.getOrThrow(commandTopic(config, "line-1"))).toBe("plant/island/line-1/d1/commands")
    expect(topicMatches(Result.getOrThrow(commandFilters(config))[1]!, Result.getOrThrow(commandTopic(config, "line-1")))).toBe(true)
  })

  it("refuses wildcards, NUL, empty levels and $ in topic parts with InvalidTopic naming the part", () => {
    expect(failure(commandFilters({ prefix: "p/+" }))).toEqual({ tag: "InvalidTopic", part: "prefix" })
    expect(failure(commandFilters({ prefix: "p//q" }))).toEqual({ tag: "InvalidTopic", part: "prefix" })
    expect(failure(commandFilters({ prefix: "$SYS" }))).toEqual({ tag: "InvalidTopic", part: "prefix" })
    expect(failure(commandFilters({ prefix: "p", discriminator: "a/b" }))).toEqual({ tag: "InvalidTopic", part: "discriminator" })
    expect(failure(commandFilters({ prefix: "p", wildcardLevels: -1 }))).toEqual({ tag: "InvalidTopic", part: "wildcardLevels" })
    expect(failure(eventsTopic({ prefix: "p" }, "a.#"))).toEqual({ tag: "InvalidTopic", part: "subject" })
    expect(failure(eventsTopic({ prefix: "p" }, "a..b"))).toEqual({ tag: "InvalidTopic", part: "subject" })
    expect(failure(eventsTopic({ prefix: "p" }, "a\u0000"))).toEqual({ tag: "InvalidTopic", part: "subject" })
    expect(failure(sharedCommandFilters({ prefix: "p" }, "g+"))).toEqual({ tag: "InvalidTopic", part: "group" })
    expect(failure(responseTopic({ prefix: "p" }, "i/j"))).toEqual({ tag: "InvalidTopic", part: "instanceId" })
    expect(failure(commandTopic({ prefix: "p" }, "a/b"))).toEqual({ tag: "InvalidTopic", part: "scope" })
    expect(failure(validateTopicName("a/+/b"))).toEqual({ tag: "InvalidTopic", part: "topic" })
    expect(failure(validateTopicName(""))).toEqual({ tag: "InvalidTopic", part: "topic" })
    expect(failure(validateFilter("a/b#"))).toEqual({ tag: "InvalidTopic", part: "filter" })
    expect(failure(validateFilter("a/#/b"))).toEqual({ tag: "InvalidTopic", part: "filter" })
    expect(failure(validateFilter("$share/g"))).toEqual({ tag: "InvalidTopic", part: "filter" })
    expect(failure(validateFilter("$share/g/a/+/b/#"))).toBe("ok")
  })

  it("never lets a subject widen a topic: every valid events topic is matched only literally", () => {
    fc.assert(
      fc.property(fc.string(), (subject) => {
        const topic = eventsTopic({ prefix: "p" }, subject)
        if (Result.isSuccess(topic)) {
          expect(topic.success).not.toMatch(/[+#\u0000]/)
          expect(topic.success.split("/").every((level) => level.length > 0)).toBe(true)
        }
      })
    )
  })

  it("matches topics like the broker", () => {
    expect(topicMatches("p/+/commands", "p/a/commands")).toBe(true)
    expect(topicMatches("p/+/commands", "p/a/b/commands")).toBe(false)
    expect(topicMatches("p/#", "p")).toBe(true)
    expect(topicMatches("p/#", "p/a/b")).toBe(true)
    expect(topicMatches("#", "$SYS/x")).toBe(false)
    expect(topicMatches("$share/g/p/+", "p/x")).toBe(true)
    expect(topicMatches("p/a", "p/a/b")).toBe(false)
  })

  it("gives every connection its own client id", () => {
    const ids = new Set(Array.from({ length: 100 }, () => Result.getOrThrow(uniqueClientId("island-1"))))
    expect(ids.size).toBe(100)
    for (const id of ids) expect(id).toMatch(/^island-1-[0-9a-f]{16}$/)
    expect(failure(uniqueClientId("bad id"))).toEqual({ tag: "InvalidTopic", part: "clientIdBase" })
  })
})

describe("event type names and scope", () => {
  it("names methods, queries and configuration, and takes the scope from the subject", () => {
    expect(parseEventType("org.opcfoundation.ISA95-JOBCONTROL_V2.StoreAndStart.v2")).toEqual({ kind: "method", method: "StoreAndStart" })
    expect(parseEventType("org.opcfoundation.Machinery.Jobs.RequestJobResponseByJobOrderID.v1")).toEqual({
      kind: "query",
      query: "RequestJobResponseByJobOrderID"
    })
    expect(parseEventType("com.github.aschamberger.ISA95-JOBCONTROL_V2.config.workmaster.v1")).toEqual({ kind: "config", config: "workmaster" })
    expect(parseEventType("org.opcfoundation.ISA95-JOBCONTROL_V2.Store.v1")).toBeUndefined()
    expect(scopeOf({ subject: "line-1/jo-1" })).toBe("line-1")
    expect(scopeOf({ subject: "line-1" })).toBe("line-1")
    expect(scopeOf({})).toBeUndefined()
  })
})
