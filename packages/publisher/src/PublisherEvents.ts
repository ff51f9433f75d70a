import type { StoredState } from "@microdcs/job-state"
import { type CloudEvent, makeCloudEvent } from "@microdcs/cloudevents-mqtt"

/** CloudEvent types of the retained messages (island.md §3). */
export const PublisherEventTypes = {
  /** `P[/D]/{scope}/order/{id}`: data `{JobOrder, State}`. */
  order: "com.github.aschamberger.microdcs.publisher.order.v1",
  /** `P[/D]/{scope}/result/{id}`: data = the job response document. */
  result: "com.github.aschamberger.microdcs.publisher.result.v1",
  /** `P[/D]/{scope}/state-index`: data = {@link StateIndex}. */
  stateIndex: "com.github.aschamberger.microdcs.publisher.stateindex.v1"
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

/** A scope's state index: every listed job, highest priority first, EndState left out. */
export interface StateIndex {
  /** From `INCR pubseq:{scope}`: grows with every index published, never reset. */
  readonly seq: number
  readonly scope: string
  /** RFC 3339. */
  readonly published_at: string
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

export const resultEvent = (source: string, scope: string, jobOrderId: string, responseVersion: number, data: unknown): CloudEvent =>
  makeCloudEvent({
    source,
    type: PublisherEventTypes.result,
    id: `${scope}/result/${jobOrderId}/v${responseVersion}`,
    subject: `${scope}/${jobOrderId}`,
    data
  })

export const stateIndexEvent = (source: string, index: StateIndex): CloudEvent =>
  makeCloudEvent({
    source,
    type: PublisherEventTypes.stateIndex,
    id: `${index.scope}/state-index/${index.seq}`,
    subject: index.scope,
    time: index.published_at,
    data: index
  })
