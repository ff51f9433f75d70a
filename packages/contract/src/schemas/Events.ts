import { triggers } from "@microdcs/job-state"
import { PublisherEventTypes } from "@microdcs/publisher"
import type { JsonObject } from "../Json.js"
import { arrayOf, closedObject, integer, stateList, stateName, text } from "./Common.js"

/**
 * What the island publishes besides replies: the job order status events and the retained
 * documents of its publisher (job order, state index pages, metadata).
 */

/** One transition of a job order (OPC UA ISA95JobOrderStatusEventType). */
export const statusEventSchema: JsonObject = closedObject(
  {
    JobOrderID: { type: "string" },
    JobState: stateList,
    Method: { enum: [...triggers], description: "What moved it: the MES's method, or the engine's Run, Complete or Abort." },
    Version: integer("The job order's version after the move: events of one job order may arrive out of order, the higher version is newer.", { minimum: 1 })
  },
  ["JobOrderID", "JobState", "Method", "Version"],
  { description: "A job order's state after one transition." }
)

/** `order/{id}`: the stored job order and its state. */
export const orderDocumentSchema = (jobOrder: string): JsonObject =>
  closedObject({ JobOrder: { $ref: jobOrder }, State: stateList }, ["JobOrder", "State"], {
    description: "A job order as the island stores it, and its state (the comment left out)."
  })

const indexedJob: JsonObject = closedObject(
  {
    job_order_id: { type: "string" },
    state: stateName,
    has_result: { type: "boolean", description: "The job is finished and its response is on result/{job_order_id}." }
  },
  ["job_order_id", "state", "has_result"]
)

/** One page of a scope's state index. */
export const stateIndexSchema: JsonObject = closedObject(
  {
    seq: integer("Grows with every index published for the scope; all pages of one index carry the same.", { minimum: 1 }),
    scope: { type: "string" },
    published_at: text("When it was published.", { format: "date-time" }),
    page: integer("This page: 0 for the head on state-index.", { minimum: 0 }),
    pages: integer("How many pages the index has, the head included.", { minimum: 1 }),
    total_jobs: integer("Jobs in the whole index.", { minimum: 0 }),
    jobs: arrayOf(indexedJob, { description: "This page's jobs, highest priority first; the pages in order list every job once (EndState left out)." })
  },
  ["seq", "scope", "published_at", "page", "pages", "total_jobs", "jobs"],
  { description: "One page of a scope's state index." }
)

const topicTemplate = (what: string) => text(`${what}; \`{scope}\`, \`{jobOrderId}\` and \`{page}\` stand for one level.`)

/** `metadata`: who publishes for the island, and where. */
export const metadataSchema: JsonObject = closedObject(
  {
    layout_version: integer("Grows when a topic or payload changes incompatibly.", { minimum: 1 }),
    source: text("The CloudEvent source of the island's documents."),
    prefix: { type: "string" },
    discriminator: { anyOf: [{ type: "string" }, { type: "null" }] },
    instance_id: text("The instance publishing now (the lease holder)."),
    topics: closedObject(
      {
        order: topicTemplate("The job order topic"),
        result: topicTemplate("The job response topic"),
        state_index: topicTemplate("The state index head"),
        state_index_page: topicTemplate("A further state index page"),
        events: topicTemplate("The status events (a `.` in the scope becomes `/`)")
      },
      ["order", "result", "state_index", "state_index_page", "events"]
    ),
    event_types: closedObject(
      Object.fromEntries(Object.entries(PublisherEventTypes).map(([key, type]) => [key, { const: type }])),
      Object.keys(PublisherEventTypes)
    ),
    max_payload_bytes: integer("No retained payload is larger.", { minimum: 1 }),
    message_expiry_seconds: integer("The MQTT message expiry of every retained document.", { minimum: 0 }),
    scopes: arrayOf({ type: "string" }, { description: "The scopes published, sorted." })
  },
  ["layout_version", "source", "prefix", "discriminator", "instance_id", "topics", "event_types", "max_payload_bytes", "message_expiry_seconds", "scopes"],
  { description: "The island's metadata: who publishes where, so a consumer needs no other configuration." }
)

/** The data of a station's messages, which the recipe alone gives meaning to. */
export const stationCommandSchema: JsonObject = {
  type: "object",
  description: "A push command's data: the action's Parameters as the recipe gives them (a command without Parameters has no data)."
}

export const stationReplySchema: JsonObject = {
  description:
    "A station's reply to a push command: the action's result, any JSON value, which transition conditions read. An object with a non-empty `error` text fails the action (as does a reply with `mdcserrorkind`)."
}

export const stationEventSchema: JsonObject = { description: "A pull event's data: the action's result, any JSON value, which transition conditions read." }

export const triggerEventSchema: JsonObject = { description: "Any event's data: a trigger looks at the event's type and subject only." }
