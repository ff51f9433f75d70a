import { JOB_RESPONSE_SCHEMA_ID, type JobResponse, type StoredState } from "@microdcs/job-state"
import { type CloudEvent, makeCloudEvent } from "@microdcs/cloudevents-mqtt"

/** CloudEvent types of the retained messages. */
export const PublisherEventTypes = {
  /** `P[/D]/{scope}/order/{id}`: data `{JobOrder, State}`. */
  order: "com.github.aschamberger.microdcs.publisher.order.v1",
  /** `P[/D]/{scope}/result/{id}`: data = the job response (`dataschema` {@link JOB_RESPONSE_SCHEMA_ID}). */
  result: "com.github.aschamberger.microdcs.publisher.result.v1",
  /** `P[/D]/{scope}/state-index` and its pages `P[/D]/{scope}/state-index/{n}`: data = {@link StateIndex}. */
  stateIndex: "com.github.aschamberger.microdcs.publisher.stateindex.v1",
  /** `P[/D]/metadata`: data = {@link PublisherMetadata}. */
  metadata: "com.github.aschamberger.microdcs.publisher.metadata.v1"
} as const

/** What `order/{id}` carries: the stored job order and its state, the comment left out. */
export interface OrderData {
  readonly JobOrder: unknown
  readonly State: StoredState
}

export interface StateIndexJob {
  readonly job_order_id: string
  /** Normalized state name (`AllowedToStart_Ready`, `Running`, `Ended_Completed`). */
  readonly state: string
  /** `result/{job_order_id}` holds the job response: the job is finished and has one. */
  readonly has_result: boolean
}

/**
 * One page of a scope's state index: every listed job, highest priority first, EndState left
 * out, cut into pages that each fit the MQTT payload limit. Page 0 is the head on
 * `state-index`; pages 1 to `pages - 1` are on `state-index/{page}`. All pages of one index carry
 * the same `seq`, so a reader that finds a page with another `seq` reads again.
 */
export interface StateIndex {
  /** From `INCR pubseq:{scope}`: grows with every index published, never reset. */
  readonly seq: number
  readonly scope: string
  /** RFC 3339. */
  readonly published_at: string
  /** This page's number: 0 for the head. */
  readonly page: number
  /** How many pages the index has, the head included (1 when it fits in one message). */
  readonly pages: number
  /** Jobs in the whole index, over all pages. */
  readonly total_jobs: number
  /** This page's jobs, in priority order; the pages in order together list every job. */
  readonly jobs: ReadonlyArray<StateIndexJob>
}

/**
 * The ids are deterministic (`{scope}/order/{id}/v{version}`), so a republished state is the
 * same event and a consumer that deduplicates by source and id sees it once.
 */
export const orderEvent = (source: string, scope: string, jobOrderId: string, version: number, data: OrderData): CloudEvent =>
  makeCloudEvent({
    source,
    type: PublisherEventTypes.order,
    id: `${scope}/order/${jobOrderId}/v${version}`,
    subject: `${scope}/${jobOrderId}`,
    data
  })

/** The job response in the current form, its `dataschema` naming that form's JSON Schema. */
export const resultEvent = (source: string, scope: string, jobOrderId: string, responseVersion: number, data: JobResponse): CloudEvent =>
  makeCloudEvent({
    source,
    type: PublisherEventTypes.result,
    id: `${scope}/result/${jobOrderId}/v${responseVersion}`,
    subject: `${scope}/${jobOrderId}`,
    dataschema: JOB_RESPONSE_SCHEMA_ID,
    data
  })

/** The head's id is `{scope}/state-index/{seq}`, a page's `{scope}/state-index/{seq}/{page}`. */
export const stateIndexEvent = (source: string, index: StateIndex): CloudEvent =>
  makeCloudEvent({
    source,
    type: PublisherEventTypes.stateIndex,
    id: index.page === 0 ? `${index.scope}/state-index/${index.seq}` : `${index.scope}/state-index/${index.seq}/${index.page}`,
    subject: index.scope,
    time: index.published_at,
    data: index
  })

/**
 * What `P[/D]/metadata` carries: who publishes for this island and where, so a consumer that
 * connects knows the topic layout and the scopes without any other configuration. Republished
 * when a publisher becomes active, when the broker started a new session, and when a scope
 * appears. `{scope}`, `{jobOrderId}` and `{page}` in the topic templates stand for one level.
 */
export interface PublisherMetadata {
  /** Grows when the topic layout or a payload changes incompatibly. */
  readonly layout_version: number
  readonly source: string
  readonly prefix: string
  readonly discriminator: string | null
  /** The active publisher (the lease holder) that wrote this. */
  readonly instance_id: string
  readonly topics: {
    readonly order: string
    readonly result: string
    readonly state_index: string
    readonly state_index_page: string
    /** Status events of the engine's transitions (not retained); a `.` in the scope becomes `/`. */
    readonly events: string
  }
  readonly event_types: typeof PublisherEventTypes
  /** No retained payload is larger; the state index is cut into pages of at most this size. */
  readonly max_payload_bytes: number
  readonly message_expiry_seconds: number
  /** The scopes published, sorted. */
  readonly scopes: ReadonlyArray<string>
}

/** The id is a digest of the content, so the same metadata republished is the same event. */
export const metadataEvent = (source: string, metadata: PublisherMetadata, digest: string, time: string): CloudEvent =>
  makeCloudEvent({ source, type: PublisherEventTypes.metadata, id: `metadata/${digest}`, time, data: metadata })
