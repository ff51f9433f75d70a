import { ERROR_REPLY_TYPE } from "@microdcs/job-control"
import { JOB_ORDER_STATUS_EVENT_TYPE } from "@microdcs/job-state"
import { TRIGGERS_CHANGED_TYPE } from "@microdcs/island-mqtt"
import { PublisherEventTypes } from "@microdcs/publisher"
import { extensions } from "./Headers.js"
import type { JsonObject } from "./Json.js"
import { message } from "./Messages.js"
import { channelAddresses } from "./Topics.js"

/** The messages besides requests and their replies, by name. */

const scopeSubject = { description: "The scope.", required: true }
const documentSubject = { description: "`{scope}/{jobOrderId}`.", required: true }

export const errorReply: JsonObject = message("ErrorResponse", {
  title: "Error reply",
  summary: "The reply to a message that is no request the island can read: it did not decode (too large, content type, payload, correlation, attributes) or its type is none of the island's.",
  headers: {
    type: { exactly: ERROR_REPLY_TYPE },
    subject: { description: "The request's subject, when it had one.", required: false },
    extensions: { causationid: extensions.causationid, mdcserrorkind: extensions.mdcserrorkind, mdcserrormessage: extensions.mdcserrormessage },
    required: ["mdcserrorkind", "mdcserrormessage"]
  },
  payload: "error-reply",
  correlation: "The request's Correlation Data, echoed byte for byte."
})

export const statusEvent: JsonObject = message("JobOrderStatusEvent", {
  title: "Job order status event",
  summary: "One per transition of a job order: from job control (the MES's methods, triggers) and from the publisher (the engine's Run, Complete, Abort).",
  headers: { type: { exactly: JOB_ORDER_STATUS_EVENT_TYPE }, subject: scopeSubject, extensions: { causationid: extensions.causationid } },
  payload: "job-order-status-event",
  correlation: "The Correlation Data of the request that moved the job order, when it had one."
})

export const stationCommand: JsonObject = message("StationCommand", {
  title: "Push command",
  summary: "A recipe action's command to a station: its type is the action's TypeId, its data the action's Parameters.",
  headers: {
    type: { any: "The recipe action's TypeId." },
    subject: scopeSubject,
    extensions: { jobid: extensions.jobid, action: extensions.action, attempt: extensions.attempt },
    required: ["jobid", "action", "attempt"]
  },
  payload: "station-command",
  dataOptional: true,
  correlation: "The command's correlation id, which the station's reply must echo.",
  responseTopic: channelAddresses.stationReplies
})

export const stationReply: JsonObject = message("StationReply", {
  title: "Station reply",
  summary: "A station's answer to a push command, routed by its Correlation Data. `mdcserrorkind` (or an `error` in the data) fails the action.",
  headers: {
    type: { any: "Any type (the island routes the reply by its Correlation Data); `{TypeId}.reply` by convention." },
    subject: { description: "The scope; without it, the scope of the job the correlation names.", required: false },
    extensions: { mdcserrorkind: extensions.mdcserrorkind, mdcserrormessage: extensions.mdcserrormessage }
  },
  payload: "station-reply",
  dataOptional: true,
  correlation: "The command's Correlation Data, echoed."
})

export const stationEvent: JsonObject = message("StationEvent", {
  title: "Pull event",
  summary: "A station's event a recipe step waits for (a pull action): routed by `jobid`, else by type to the job that has waited longest.",
  headers: {
    type: { any: "The TypeId of the pull action it answers." },
    subject: { description: "The scope (or `{scope}/...`); without it, the topic's scope.", required: false },
    extensions: { jobid: extensions.jobid }
  },
  payload: "station-event",
  dataOptional: true
})

export const triggerEvent: JsonObject = message("TriggerEvent", {
  title: "Event that may fire a trigger",
  summary: "Any CloudEvent on an events topic: each enabled trigger of its type (and subject pattern) starts a job order.",
  headers: { type: { any: "The type a trigger names." }, subject: { description: "Matched by a trigger's subject pattern; without a pattern, the trigger's scope.", required: false } },
  payload: "trigger-event",
  dataOptional: true
})

export const triggersChanged: JsonObject = message("TriggersChanged", {
  title: "Trigger change",
  summary: "A trigger was stored or removed: every instance reloads its triggers. Best effort; the store's nudge carries the edit too.",
  headers: { type: { exactly: TRIGGERS_CHANGED_TYPE }, subject: scopeSubject },
  payload: "triggers-changed"
})

const retained = (name: string, title: string, type: string, payload: string, subject: typeof scopeSubject | undefined, summary: string) =>
  message(name, { title, summary, headers: { type: { exactly: type }, ...(subject === undefined ? {} : { subject }) }, payload })

export const orderDocument = retained("OrderDocument", "Retained job order", PublisherEventTypes.order, "order-document", documentSubject, "The job order and its state, after every change.")
export const resultDocument = retained(
  "ResultDocument",
  "Retained job response",
  PublisherEventTypes.result,
  "job-response",
  documentSubject,
  "The job response, once the job order ended and has one (the topic is keyed by the job order's id)."
)
export const stateIndexDocument = retained(
  "StateIndexPage",
  "Retained state index page",
  PublisherEventTypes.stateIndex,
  "state-index",
  scopeSubject,
  "A page of the scope's state index: the head (page 0) on state-index, further pages on state-index/{page}."
)
export const metadataDocument = retained(
  "IslandMetadata",
  "Retained island metadata",
  PublisherEventTypes.metadata,
  "island-metadata",
  undefined,
  "Who publishes for the island and where: its topics, event types, limits and scopes."
)
