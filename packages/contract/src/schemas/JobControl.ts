import { MAX_PAGE_SIZE } from "@microdcs/job-control"
import type { JsonObject } from "../Json.js"
import { arrayOf, closedObject, comment, idText, integer, object, oneOfPresent, returnStatus, stateList, stateName, text } from "./Common.js"

/**
 * The payloads of the ISA-95 job control methods and the two Machinery Jobs queries: what an
 * MES sends and what the island answers. `jobOrder` and `jobResponse` are the ids of the job
 * order and job response schemas, referenced rather than repeated.
 */

/** Store, StoreAndStart, Update: a whole job order. */
export const jobOrderRequestSchema = (jobOrder: string): JsonObject =>
  object({ JobOrder: { $ref: jobOrder }, Comment: comment }, ["JobOrder"], {
    description: "The data of Store, StoreAndStart and Update: the job order, and why."
  })

/** Start … Clear: the job order's id. */
export const jobOrderIdRequestSchema: JsonObject = object({ JobOrderID: idText("The job order to move."), Comment: comment }, ["JobOrderID"], {
  description: "The data of Start, RevokeStart, Pause, Resume, Stop, Abort, Cancel and Clear: the job order's id, and why."
})

/** The reply of every method: its ReturnStatus, and the job order it concerns. */
export const methodReplySchema: JsonObject = closedObject(
  { ReturnStatus: returnStatus, JobOrderID: text("The job order the method concerned (absent when the request could not be read).") },
  ["ReturnStatus"],
  { description: "The reply to a job control method. A refusal also carries `mdcserrorkind` and `mdcserrormessage` as user properties." }
)

export const responseByIdRequestSchema: JsonObject = object({ JobOrderID: idText("The job order whose response is wanted.") }, ["JobOrderID"], {
  description: "RequestJobResponseByJobOrderID: the job order's id."
})

export const responseByIdReplySchema = (jobResponse: string): JsonObject =>
  closedObject({ ReturnStatus: returnStatus, JobOrderID: { type: "string" }, JobResponse: { $ref: jobResponse } }, ["ReturnStatus"], {
    description: "The job order's response; without `JobResponse` while the job order (known in the scope) has none yet."
  })

const requestedState: JsonObject = { description: "A normalized state name, or the state as OPC UA ISA95StateDataType[].", anyOf: [stateName, stateList] }

export const responsesByStateRequestSchema: JsonObject = object(
  {
    JobOrderState: requestedState,
    JobState: { ...requestedState, description: "An alias of JobOrderState." },
    Cursor: text("Where the page starts: `0` (the default) or a reply's NextCursor.", { pattern: "^\\d+$" }),
    PageSize: integer("How many to look at for this page (a hint).", { minimum: 1, maximum: MAX_PAGE_SIZE })
  },
  [],
  {
    ...oneOfPresent(["JobOrderState", "JobState"]),
    description: "RequestJobResponseByJobOrderState: the state, and where the page starts."
  }
)

export const responsesByStateReplySchema = (jobResponse: string): JsonObject =>
  closedObject(
    {
      ReturnStatus: returnStatus,
      JobOrderState: stateName,
      JobResponses: arrayOf({ $ref: jobResponse }),
      NextCursor: text("Where the next page starts; absent on the last page. A page may be short or empty while it is set.", { pattern: "^\\d+$" })
    },
    ["ReturnStatus"],
    { description: "One page of the scope's job responses in the state." }
  )

/** The reply to a request the island could not read or does not know: only its ReturnStatus (INVALID_REQUEST). */
export const errorReplySchema: JsonObject = closedObject({ ReturnStatus: returnStatus }, ["ReturnStatus"], {
  description: "The reply to a message that is no request the island can read (a decode error, an unknown type): INVALID_REQUEST; `mdcserrorkind` and `mdcserrormessage` say why."
})
