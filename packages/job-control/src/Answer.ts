import { ReturnStatus, type ReturnStatusCode } from "@microdcs/job-state"
import type { BadRequest } from "./Payload.js"
import type { HandleResult, ReplyError, StatusEvent } from "./Request.js"

/**
 * What a handler decided, before it becomes a reply: the status, the OPC UA fields besides
 * ReturnStatus, the reason when it is not NO_ERROR, and the status events of what it wrote.
 */
export interface Answer {
  readonly status: ReturnStatusCode
  readonly data: Readonly<Record<string, unknown>>
  readonly error?: ReplyError
  readonly statusEvents: ReadonlyArray<StatusEvent>
}

export const succeeded = (data: Readonly<Record<string, unknown>> = {}, statusEvents: ReadonlyArray<StatusEvent> = []): Answer => ({
  status: ReturnStatus.NO_ERROR,
  data,
  statusEvents
})

export const refused = (
  status: Exclude<ReturnStatusCode, 1>,
  kind: string,
  message: string,
  data: Readonly<Record<string, unknown>> = {}
): Answer => ({ status, data, error: { kind, message }, statusEvents: [] })

export const unknownJobOrder = (jobOrderId: string, scope: string): Answer =>
  refused(ReturnStatus.UNKNOWN_JOB_ORDER_ID, "UnknownJobOrderId", `job order ${jobOrderId} is unknown in scope ${scope}`, {
    JobOrderID: jobOrderId
  })

export const unableToAccept = (jobOrderId: string, kind: string, message: string): Answer =>
  refused(ReturnStatus.UNABLE_TO_ACCEPT_JOB_ORDER, kind, message, { JobOrderID: jobOrderId })

/** INVALID_REQUEST: the request was not processed and nothing was written. */
export const invalidRequest = (bad: BadRequest): Answer =>
  refused(ReturnStatus.INVALID_REQUEST, bad.kind, bad.message, bad.problems ? { Problems: bad.problems } : {})

/** The reply: `data` always opens with ReturnStatus, as OPC UA method results do. */
export const toResult = (replyType: string, answer: Answer): HandleResult => ({
  reply: {
    type: replyType,
    data: { ReturnStatus: answer.status, ...answer.data },
    status: answer.status,
    ...(answer.error !== undefined ? { error: answer.error } : {})
  },
  statusEvents: answer.statusEvents
})
