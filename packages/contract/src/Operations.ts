import { publisherDefaults } from "@microdcs/publisher"
import type { JsonObject } from "./Json.js"
import { requestKinds } from "./Requests.js"

/**
 * The operations, from the island's side: what it receives and what it sends on each channel,
 * with the reply of a request or push command, and the MQTT QoS and retain flag it uses.
 */

const channel = (name: string): JsonObject => ({ $ref: `#/channels/${name}` })
const messageOf = (channelName: string, message: string): JsonObject => ({ $ref: `#/channels/${channelName}/messages/${message}` })

const qos1: JsonObject = { mqtt: { qos: 1, bindingVersion: "0.2.0" } }
const retained: JsonObject = {
  mqtt: { qos: 1, retain: true, messageExpiryInterval: publisherDefaults.messageExpirySeconds, bindingVersion: "0.2.0" }
}

const operation = (action: "send" | "receive", channelName: string, summary: string, messages: ReadonlyArray<string>, more: JsonObject = {}): JsonObject => ({
  action,
  channel: channel(channelName),
  summary,
  messages: messages.map((m) => messageOf(channelName, m)),
  bindings: qos1,
  ...more
})

/** One operation per request type: the island receives it and replies on the request's Response Topic. */
const requestOperations = (): ReadonlyArray<readonly [string, JsonObject]> =>
  requestKinds().map((kind) => [
    kind.key,
    operation(
      "receive",
      "commands",
      kind.summary,
      kind.variants.map((variant) => variant.key),
      { reply: { channel: channel("replies"), messages: [messageOf("replies", `${kind.key}Response`), messageOf("replies", "ErrorResponse")] } }
    )
  ])

const retainedOperation = (channelName: string, summary: string, messages: ReadonlyArray<string>) =>
  operation("send", channelName, `${summary} (the active publisher only; retained, expiring after the island's message expiry, default 48 h).`, messages, { bindings: retained })

export const operations = (): JsonObject =>
  Object.fromEntries([
    ...requestOperations(),
    ["publishStatusEvent", operation("send", "statusEvents", "Publishes a status event for each job order transition.", ["JobOrderStatusEvent"])],
    [
      "sendStationCommand",
      operation("send", "stationCommands", "Sends a recipe's push command to the station of the scope; the station replies on the command's Response Topic.", ["StationCommand"], {
        reply: { channel: channel("stationReplies"), messages: [messageOf("stationReplies", "StationReply")] }
      })
    ],
    ["receiveStationEvent", operation("receive", "stationEvents", "Takes the stations' pull events (every instance sees each one).", ["StationEvent"])],
    ["receiveTriggerEvent", operation("receive", "triggerEvents", "Watches the events topics for events that fire a trigger (every instance sees each one).", ["TriggerEvent"])],
    ["announceTriggerChange", operation("send", "triggerChanges", "Announces a trigger edit, once per edit, wherever it was made.", ["TriggersChanged"])],
    ["receiveTriggerChange", operation("receive", "triggerChanges", "Reloads the triggers on every announcement.", ["TriggersChanged"])],
    ["publishOrder", retainedOperation("order", "Retains each job order after every change; deletes it when it is retired", ["OrderDocument", "RetainedDeletion"])],
    ["publishResult", retainedOperation("result", "Retains each ended job order's response; deletes it with the job order", ["ResultDocument", "RetainedDeletion"])],
    ["publishStateIndex", retainedOperation("stateIndex", "Retains each scope's state index head, at most once a second", ["StateIndexPage"])],
    ["publishStateIndexPage", retainedOperation("stateIndexPage", "Retains the further pages of a large index, before its head", ["StateIndexPage", "RetainedDeletion"])],
    ["publishMetadata", retainedOperation("metadata", "Retains the island's metadata when a publisher becomes active, a broker session is new or a scope appears", ["IslandMetadata"])]
  ])
