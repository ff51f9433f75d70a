import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { commandFilters, eventsTopic, metadataTopic, responseTopic, type TopicConfig } from "@microdcs/cloudevents-mqtt"
import { contractDocument } from "@microdcs/contract"
import { stationCommandTopic, stationEventsTopic, TRIGGERS_CHANGED_TYPE, triggerChangesTopic, triggerEventFilters } from "@microdcs/island-mqtt"
import { configKinds, ConfigEventTypes, ERROR_REPLY_TYPE, replyTypeOf, TRIGGER_CONFIG_EVENT_TYPE } from "@microdcs/job-control"
import { JOB_ORDER_STATUS_EVENT_TYPE, MethodEventTypes, methods, queries, QueryEventTypes } from "@microdcs/job-state"
import { JOURNAL_CONFIG_EVENT_TYPE } from "@microdcs/journal"
import { jobTopic, PublisherEventTypes, stateIndexPageTopic, stateIndexTopic } from "@microdcs/publisher"

/**
 * The document covers every request type the island answers and every event type it sends,
 * and each channel address, filled in, is the topic the island's own builders make, with a
 * discriminator and without.
 */

interface Channel {
  readonly address: string | null
  readonly messages: Readonly<Record<string, { readonly $ref: string }>>
}
interface Message {
  readonly headers?: { readonly allOf: ReadonlyArray<{ readonly properties?: { readonly type?: { readonly const?: string } } }> }
}

const document = contractDocument() as unknown as {
  readonly channels: Readonly<Record<string, Channel>>
  readonly components: { readonly messages: Readonly<Record<string, Message>> }
}

/** The CloudEvent types a channel's messages name exactly. */
const typesOn = (channel: string): ReadonlyArray<string> =>
  Object.values(document.channels[channel]?.messages ?? {}).flatMap(({ $ref }) => {
    const message = document.components.messages[$ref.split("/").at(-1)!]
    const type = message?.headers?.allOf[1]?.properties?.type?.const
    return type === undefined ? [] : [type]
  })

/** An address with its parameters filled in. */
const fill = (channel: string, values: Readonly<Record<string, string>>): string =>
  (document.channels[channel]?.address ?? "").replace(/\{(\w+)\}/g, (_, name: string) => values[name] ?? `<${name}?>`)

describe("the AsyncAPI document", () => {
  it("has a request message for every method, query and configuration kind, and its reply", () => {
    const requests = [
      ...methods.map((m) => MethodEventTypes[m]),
      ...queries.map((q) => QueryEventTypes[q]),
      ...configKinds.map((k) => ConfigEventTypes[k]),
      TRIGGER_CONFIG_EVENT_TYPE,
      JOURNAL_CONFIG_EVENT_TYPE
    ]
    expect(new Set(typesOn("commands"))).toEqual(new Set(requests))
    expect(new Set(typesOn("replies"))).toEqual(new Set([...requests.map(replyTypeOf), ERROR_REPLY_TYPE]))
  })

  it("has a message for every event type the island publishes", () => {
    expect(typesOn("statusEvents")).toEqual([JOB_ORDER_STATUS_EVENT_TYPE])
    expect(typesOn("triggerChanges")).toEqual([TRIGGERS_CHANGED_TYPE])
    const retained = ["order", "result", "stateIndex", "stateIndexPage", "metadata"].flatMap(typesOn)
    expect(new Set(retained)).toEqual(new Set(Object.values(PublisherEventTypes)))
  })

  for (const discriminator of [undefined, "island-7"]) {
    it(`names the topics the island's builders make (${discriminator === undefined ? "no discriminator" : "a discriminator"})`, () => {
      const config: TopicConfig = { prefix: "plant/microdcs", discriminator, wildcardLevels: 1 }
      const values = { prefix: "plant/microdcs", discriminator: discriminator === undefined ? "" : `/${discriminator}`, scope: "line-1", jobOrderId: "jo-1", page: "2", instanceId: "i-1", eventPath: "line-1" }
      const topics = { prefix: config.prefix, discriminator }
      const topic = Result.getOrThrow
      expect(fill("commands", values)).toBe(topic(commandFilters(config))[1]?.replace("+", "line-1"))
      expect(fill("statusEvents", values)).toBe(topic(eventsTopic(config, "line-1")))
      expect(fill("triggerEvents", values)).toBe(topic(triggerEventFilters(config, 1))[0]?.replace("+", "line-1"))
      expect(fill("triggerChanges", values)).toBe(topic(triggerChangesTopic(config)))
      expect(fill("stationCommands", values)).toBe(topic(stationCommandTopic(config, "line-1")))
      expect(fill("stationEvents", values)).toBe(topic(stationEventsTopic(config, "line-1")))
      expect(fill("stationReplies", values)).toBe(topic(responseTopic(config, "i-1")))
      expect(fill("order", values)).toBe(topic(jobTopic(topics, "order", "line-1", "jo-1")))
      expect(fill("result", values)).toBe(topic(jobTopic(topics, "result", "line-1", "jo-1")))
      expect(fill("stateIndex", values)).toBe(topic(stateIndexTopic(topics, "line-1")))
      expect(fill("stateIndexPage", values)).toBe(topic(stateIndexPageTopic(topics, "line-1", 2)))
      expect(fill("metadata", values)).toBe(topic(metadataTopic(config)))
    })
  }
})
