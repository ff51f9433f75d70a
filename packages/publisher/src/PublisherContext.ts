import type { Effect } from "effect"
import type { MqttConnectionService } from "@microdcs/cloudevents-mqtt"
import type { ChangeStream, ConnectionError, IndexScores, JobOrderDao, JobResponseDao, PublisherCursors, WrongType } from "@microdcs/store"
import type { ResolvedPublisherOptions } from "./PublisherOptions.js"
import type { Stats } from "./PublisherStats.js"

/** The services one active publisher works with, resolved once when the layer is built. */
export interface PublisherContext {
  readonly options: ResolvedPublisherOptions
  readonly mqtt: MqttConnectionService
  /** A job order's place in its scope list. */
  readonly scores: IndexScores["Service"]
  readonly jobOrders: JobOrderDao["Service"]
  readonly responses: JobResponseDao["Service"]
  readonly cursors: PublisherCursors["Service"]
  readonly changes: ChangeStream["Service"]
  readonly stats: Stats
  /**
   * Run before every batch: succeeds while this instance still holds the lease. When another
   * instance holds it, the session ends at once and the batch is never published; a store
   * failure fails the batch, which is tried again on the next round.
   */
  readonly fence: Effect.Effect<void, WrongType | ConnectionError>
}
