import { Result } from "effect"
import { commandFilters, eventsTopic, type InvalidTopic, metadataTopic, responseTopic } from "@microdcs/cloudevents-mqtt"
import { DEFAULT_STATION_LEVEL, stationCommandTopic, stationEventsTopic, triggerChangesTopic, triggerEventFilters } from "@microdcs/island-mqtt"
import { jobTopic, stateIndexPageTopic, stateIndexTopic } from "@microdcs/publisher"

/**
 * The channel addresses, made by the island's own topic builders from parameter placeholders,
 * so the contract names the topics the code publishes and subscribes to. The discriminator is
 * optional in every topic, which an address cannot say; so `{discriminator}` stands for the
 * slash before it too: empty, or `/` and the island's discriminator.
 */

const prefix = "{prefix}"
const discriminator = "{discriminator}"
const topics = { prefix, discriminator }

/** The builders refuse only bad levels, which the placeholders are not: a failure is a bug. */
const built = <A>(result: Result.Result<A, InvalidTopic>): A =>
  Result.getOrThrowWith(result, (error) => new Error(`topic builder refused a placeholder: ${error.message}`))

/** `/{discriminator}` as `{discriminator}`: the parameter holds its slash, so it may be empty. */
const optional = (topic: string): string => topic.replace(`/${discriminator}`, discriminator)

/** `+` levels of a filter as a named parameter. */
const named = (filter: string, parameter: string): string => filter.replace("/+/", `/{${parameter}}/`)

/** A page number as a placeholder: the builder takes a number. */
const SAMPLE_PAGE = 1

/** The address of every channel, by channel name. */
export const channelAddresses = {
  /** The wildcard level of the command filters is where the scope goes, by convention. */
  commands: optional(named(built(commandFilters({ ...topics, wildcardLevels: 1 })).at(-1)!, "scope")),
  statusEvents: optional(built(eventsTopic(topics, "{scope}"))),
  triggerEvents: optional(named(built(triggerEventFilters(topics, 1))[0]!, "eventPath")),
  triggerChanges: optional(built(triggerChangesTopic(topics))),
  stationCommands: optional(built(stationCommandTopic(topics, "{scope}"))),
  stationEvents: optional(built(stationEventsTopic(topics, "{scope}"))),
  stationReplies: built(responseTopic(topics, "{instanceId}")),
  order: optional(built(jobTopic(topics, "order", "{scope}", "{jobOrderId}"))),
  result: optional(built(jobTopic(topics, "result", "{scope}", "{jobOrderId}"))),
  stateIndex: optional(built(stateIndexTopic(topics, "{scope}"))),
  stateIndexPage: optional(built(stateIndexPageTopic(topics, "{scope}", SAMPLE_PAGE)).replace(/\/1$/, "/{page}")),
  metadata: optional(built(metadataTopic(topics)))
} as const

export type ChannelName = keyof typeof channelAddresses | "replies"

/** The level between the prefix and a station's scope (the daemon uses the default). */
export const STATION_LEVEL = DEFAULT_STATION_LEVEL
