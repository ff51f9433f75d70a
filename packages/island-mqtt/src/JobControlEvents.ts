import {
  type CloudEvent,
  codecFor,
  correlationIdOf,
  JSON_CONTENT_TYPE,
  makeCloudEvent,
  makeErrorReply,
  type MessageTooLarge
} from "@microdcs/cloudevents-mqtt"
import { ERROR_REPLY_TYPE, type JobControlReply, type JobControlRequest, type StatusEvent } from "@microdcs/job-control"
import { JOB_ORDER_STATUS_EVENT_TYPE, JobStates, ReturnStatus, toStoredState } from "@microdcs/job-state"

/**
 * The CloudEvents the job control ingress sends: replies to MES requests and job order status
 * events. Pure functions, so the ingress itself only sequences I/O.
 */

/**
 * The type of a job order status event (OPC UA ISA95JobOrderStatusEventType), in the namespace
 * and version of the job control methods.
 */
export const STATUS_EVENT_TYPE = JOB_ORDER_STATUS_EVENT_TYPE

/** The processor's view of a decoded request; `dataschema` travels with the extensions. */
export const toJobControlRequest = (event: CloudEvent): JobControlRequest => ({
  id: event.id,
  source: event.source,
  type: event.type,
  subject: event.subject,
  data: event.data,
  extensions: event.dataschema !== undefined ? { ...event.extensions, dataschema: event.dataschema } : event.extensions
})

/** A reply is serialised like its request (a MessagePack request gets a MessagePack reply). */
const replyContentType = (request: CloudEvent | undefined): string => {
  const requested = request?.datacontenttype
  return requested !== undefined && codecFor(requested)._tag !== "unsupported" ? requested : JSON_CONTENT_TYPE
}

/**
 * The reply to a request the processor answered. A refusal carries `mdcserrorkind` and
 * `mdcserrormessage` besides its ReturnStatus, so a client can branch without reading `data`.
 */
export const replyEvent = (source: string, request: CloudEvent, reply: JobControlReply): CloudEvent => {
  const base =
    reply.error === undefined
      ? makeCloudEvent({ source, type: reply.type, subject: request.subject })
      : makeErrorReply({ source, type: reply.type, subject: request.subject, kind: reply.error.kind, message: reply.error.message })
  return { ...base, datacontenttype: replyContentType(request), data: reply.data }
}

/**
 * The reply to a message that is not a request we can read (bad input): the
 * decode error's kind and message, and ReturnStatus INVALID_REQUEST for OPC UA clients.
 */
export const badInputReply = (source: string, kind: string, message: string, request?: CloudEvent): CloudEvent => ({
  ...makeErrorReply({ source, type: ERROR_REPLY_TYPE, subject: request?.subject, kind, message }),
  datacontenttype: replyContentType(request),
  data: { ReturnStatus: ReturnStatus.INVALID_REQUEST }
})

/** `mdcserrorkind` of the reply sent instead of one over the broker's Maximum Packet Size. */
export const REPLY_TOO_LARGE = "ReplyTooLarge"

/**
 * What a request gets instead of a reply over the broker's Maximum Packet Size, which the broker
 * would refuse every time: the reply's type and subject, `mdcserrorkind` ReplyTooLarge with both
 * sizes, and of its data only the ReturnStatus. The request was processed (its ReturnStatus says
 * how); only the data of its answer cannot travel.
 */
export const tooLargeReply = (source: string, reply: CloudEvent, error: MessageTooLarge): CloudEvent => {
  const status = (reply.data as { ReturnStatus?: unknown } | undefined)?.ReturnStatus
  const message = `the reply (${error.bytes} bytes) is over the broker's maximum packet size (${error.limit} bytes) and was not sent; the request was processed, its answer's data is left out`
  return {
    ...makeErrorReply({ source, type: reply.type, subject: reply.subject, kind: REPLY_TOO_LARGE, message }),
    ...(typeof status === "number" ? { datacontenttype: reply.datacontenttype ?? JSON_CONTENT_TYPE, data: { ReturnStatus: status } } : {})
  }
}

/**
 * One status event per landed transition, on the scope's events topic. `Version` is the job
 * order's version after the write: events of one job order can be published out of order by
 * concurrent handlers, and the version tells the MES which is newer.
 */
export const statusEvent = (source: string, request: CloudEvent, status: StatusEvent): CloudEvent => {
  const correlationid = correlationIdOf(request)
  return makeCloudEvent({
    source,
    type: STATUS_EVENT_TYPE,
    subject: status.scope,
    causationid: request.id,
    ...(correlationid !== undefined ? { correlationid } : {}),
    data: {
      JobOrderID: status.jobOrderId,
      JobState: toStoredState(JobStates[status.state]),
      Method: status.method,
      Version: status.version
    }
  })
}
