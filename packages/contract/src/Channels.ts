import { DEFAULT_TRIGGER_EVENT_LEVELS } from "@microdcs/island-mqtt"
import type { JsonObject } from "./Json.js"
import { requestKinds } from "./Requests.js"
import { channelAddresses, STATION_LEVEL } from "./Topics.js"

/**
 * The channels: one per topic (or topic family) of the island, each with the messages that
 * travel on it, referenced from `components.messages`. Addresses come from the topic builders
 * (`Topics.ts`); their parameters are described here.
 */

const ref = (name: string): JsonObject => ({ $ref: `#/components/messages/${name}` })

/** The parameters every island topic shares. */
export const parameters: Readonly<Record<string, JsonObject>> = {
  prefix: {
    description: "The island's topic prefix, one or more levels (`MQTT_TOPIC_PREFIX`).",
    default: "microdcs",
    examples: ["microdcs", "plant-a/microdcs"]
  },
  discriminator: {
    description:
      "Empty, or `/` followed by the island's discriminator (`MQTT_DISCRIMINATOR`, one level) when islands share a prefix. It holds its slash because it is optional.",
    default: "",
    examples: ["", "/island-1"]
  },
  scope: { description: "The scope: one level (a job order's, a station's).", examples: ["line-1"] },
  jobOrderId: { description: "The job order's id (one level; a job order whose id is no valid level gets no topic).", examples: ["jo-1"] },
  page: { description: "A state index page number, 1 to `pages - 1` (the head is page 0, on state-index).", examples: ["1"] },
  instanceId: { description: "The island instance whose commands these replies answer (`ISLAND_INSTANCE_ID`), or the shared group (`MQTT_SHARED_GROUP`), which any live member serves.", examples: ["island-1"] }
}

/** Parameters whose meaning differs on one channel. */
const scopeOverrides: Readonly<Record<string, JsonObject>> = {
  commands: {
    description:
      "By convention the scope; the island reads the scope from the subject. It takes 0 to `MQTT_WILDCARD_LEVELS` (default 1) levels here: `{prefix}{discriminator}/commands` and `{prefix}/a/b{discriminator}/commands` (with 2) reach it too.",
    examples: ["line-1"]
  },
  statusEvents: { description: "The event's subject, each `.` as `/` (a scope, or `scope/cell` for `scope.cell`).", examples: ["line-1"] }
}

const eventPath: JsonObject = {
  description: `1 to the island's event levels (default ${DEFAULT_TRIGGER_EVENT_LEVELS}) levels: a scope (\`line-1\`), a subject's levels (\`line-1/cell-4\`), a station's (\`${STATION_LEVEL}/line-1\`).`,
  examples: ["line-1", `${STATION_LEVEL}/line-1`]
}

const parametersOf = (name: string, address: string): JsonObject =>
  Object.fromEntries(
    [...address.matchAll(/\{(\w+)\}/g)].map(([, parameter]) => {
      if (parameter === "eventPath") return [parameter, eventPath]
      if (parameter === "scope" && scopeOverrides[name] !== undefined) return [parameter, scopeOverrides[name]]
      return [parameter, { $ref: `#/components/parameters/${parameter}` }]
    })
  )

const channel = (name: keyof typeof channelAddresses, title: string, description: string, messages: ReadonlyArray<string>): readonly [string, JsonObject] => [
  name,
  {
    address: channelAddresses[name],
    title,
    description,
    parameters: parametersOf(name, channelAddresses[name]),
    messages: Object.fromEntries(messages.map((m) => [m, ref(m)]))
  }
]

const requestMessages = () => requestKinds().flatMap((kind) => kind.variants.map((variant) => variant.key))
const replyMessages = () => [...requestKinds().map((kind) => `${kind.key}Response`), "ErrorResponse"]

/** The channels whose messages are fixed: name, title, description, messages. */
const fixedChannels: ReadonlyArray<readonly [keyof typeof channelAddresses, string, string, ReadonlyArray<string>]> = [
  ["statusEvents", "Job order status events", "Island → MES: one event per job order transition (not retained).", ["JobOrderStatusEvent"]],
  [
    "triggerEvents",
    "Events that may fire triggers",
    "Anyone → island: the island watches every events topic (its own status events and the stations' events included) " +
      "and starts a job order for each event that fires a trigger.",
    ["TriggerEvent"]
  ],
  ["triggerChanges", "Trigger changes", "Island ↔ island (and tools): trigger edits, so every instance reloads its triggers.", ["TriggersChanged"]],
  ["stationCommands", "Station push commands", "Island → station: a recipe action's command, with the island's station reply topic as Response Topic.", ["StationCommand"]],
  ["stationReplies", "Station replies", "Station → island: the answer to a push command, on the command's Response Topic.", ["StationReply"]],
  ["stationEvents", "Station pull events", "Station → island: events that recipe steps wait for.", ["StationEvent"]],
  ["order", "Retained job orders", "Island → anyone: each job order and its state, retained (message expiry); deleted when it is retired.", ["OrderDocument", "RetainedDeletion"]],
  ["result", "Retained job responses", "Island → anyone: the job response of each ended job order, retained; deleted with the job order.", ["ResultDocument", "RetainedDeletion"]],
  ["stateIndex", "Retained state index", "Island → anyone: the head of a scope's state index (page 0), retained.", ["StateIndexPage"]],
  [
    "stateIndexPage",
    "Retained state index pages",
    "Island → anyone: the further pages of an index larger than one message, retained before the head; pages no longer needed are deleted.",
    ["StateIndexPage", "RetainedDeletion"]
  ],
  ["metadata", "Retained island metadata", "Island → anyone: the island's topic layout and scopes, retained.", ["IslandMetadata"]]
]

/** The replies go to each request's own Response Topic: a channel without an address. */
const replies = (): JsonObject => ({
  address: null,
  title: "Job control replies",
  description: "Island → MES: the reply to each request, on the request's Response Topic (QoS 1), with its Correlation Data echoed.",
  messages: Object.fromEntries(replyMessages().map((m) => [m, ref(m)]))
})

export const channels = (): JsonObject =>
  Object.fromEntries([
    channel(
      "commands",
      "Job control requests",
      "MES → island: job control methods, queries and configuration, each a CloudEvent in binary mode with a Response Topic. " +
        "A request is answered once: the same `id` and `source` again gets the first reply and changes nothing.",
      requestMessages()
    ),
    ["replies", replies()],
    ...fixedChannels.map(([name, title, description, messages]) => channel(name, title, description, messages))
  ])
