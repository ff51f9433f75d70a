import type { MqttConnectionService } from "@microdcs/cloudevents-mqtt"
import type { ChangeStream, JobOrderDao, JobResponseDao, PublisherCursors } from "@microdcs/store"
import type { ResolvedPublisherOptions } from "./PublisherOptions.js"
import type { Stats } from "./PublisherStats.js"

/** The services one active publisher works with, resolved once when the layer is built. */
export interface PublisherContext {
  readonly options: ResolvedPublisherOptions
  readonly mqtt: MqttConnectionService
  readonly jobOrders: JobOrderDao
  readonly responses: JobResponseDao
  readonly cursors: PublisherCursors
  readonly changes: ChangeStream
  readonly stats: Stats
}
