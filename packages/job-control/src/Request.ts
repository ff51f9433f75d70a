import type { Origin, ReturnStatusCode, StateName } from "@microdcs/job-state"

/**
 * The processor's input and output, free of any transport: a decoded CloudEvent in, a reply
 * and the status events to publish out. The MQTT binding (or a test, or the admin CLI) maps
 * these to and from the wire.
 */

/** A decoded CloudEvent as the processor sees it. */
export interface JobControlRequest {
  readonly id: string
  readonly source: string
  readonly type: string
  /** `{scope}` or `{scope}/{anything}`: the scope is the part before the first `/`. */
  readonly subject: string | undefined
  /** The decoded payload (JSON or msgpack already turned into values by the transport). */
  readonly data: unknown
  /** Every other CloudEvent attribute by name (`method` for station configuration, `dataschema`, ...). */
  readonly extensions: Readonly<Record<string, string>>
  /**
   * Who sends it, recorded with every write it makes (the change entry, the job order record)
   * and followed into the execution log. Absent (the MQTT binding): the MES named by `source`.
   * The admin CLI sets `{ kind: "cli", id: "alice@host" }`, a trigger `{ kind: "trigger", id }`.
   */
  readonly origin?: Origin
}

/** Why a request was not answered with NO_ERROR; the transport sends it as `mdcserrorkind` / `mdcserrormessage`. */
export interface ReplyError {
  /** A stable word a client can branch on: `MalformedPayload`, `UnknownType`, `LimitReached`, ... */
  readonly kind: string
  readonly message: string
}

/** The answer to one request. */
export interface JobControlReply {
  /** The reply's CloudEvent type: the request type with `Response` before the version (`...Store.v2` → `...StoreResponse.v2`). */
  readonly type: string
  /** OPC UA Machinery Jobs shaped: `{ ReturnStatus, JobOrderID?, JobResponse?, JobResponses?, ... }`. */
  readonly data: Readonly<Record<string, unknown>>
  /** The ReturnStatus of `data`, repeated for the transport (metrics, logs) so it need not read `data`. */
  readonly status: ReturnStatusCode
  /** Present exactly when `status` is not NO_ERROR. */
  readonly error?: ReplyError
}

/** A job order moved to a new state: publish an ISA95JobOrderStatusEvent for it. */
export interface StatusEvent {
  readonly jobOrderId: string
  readonly scope: string
  /** The normalized state name after the transition (`AllowedToStart_Ready`, `EndState`). */
  readonly state: StateName
  /** The job order's version after the write; orders events of one job order. */
  readonly version: number
  /** The method that caused the transition (the change word of the write). */
  readonly method: string
}

/** What `JobControl.handle` returns: always a reply; status events only for writes that landed. */
export interface HandleResult {
  readonly reply: JobControlReply
  readonly statusEvents: ReadonlyArray<StatusEvent>
}

/** The reply type of a request that names no known type (its own type is not ours to echo). */
export const ERROR_REPLY_TYPE = "com.github.aschamberger.microdcs.ErrorResponse.v1"

/** `org.opcfoundation.ISA95-JOBCONTROL_V2.Store.v2` → `org.opcfoundation.ISA95-JOBCONTROL_V2.StoreResponse.v2`. */
export const replyTypeOf = (requestType: string): string => {
  const version = /\.v\d+$/.exec(requestType)
  return version ? `${requestType.slice(0, version.index)}Response${version[0]}` : `${requestType}Response`
}

/** The scope of a request: its subject up to the first `/`; `undefined` when there is none. */
export const scopeOf = (subject: string | undefined): string | undefined => {
  if (subject === undefined) return undefined
  const slash = subject.indexOf("/")
  const scope = slash === -1 ? subject : subject.slice(0, slash)
  return scope.length > 0 ? scope : undefined
}
