// Options, their defaults and their check (also run by the layer).
export {
  type PublisherOptions,
  publisherDefaults,
  resolvePublisherOptions,
  type ResolvedPublisherOptions
} from "./PublisherOptions.js"
// The topics it publishes to.
export * from "./PublisherTopics.js"
// The event types and the payload shapes a subscriber reads (the event builders are internal).
export {
  type OrderData,
  PublisherEventTypes,
  type PublisherMetadata,
  type StateIndex,
  type StateIndexJob
} from "./PublisherEvents.js"
export type { PublisherStats } from "./PublisherStats.js"
// The publisher: the layer, or a scoped Effect.
export { makePublisher, Publisher, PublisherLive, type PublisherRequirements, type PublisherService } from "./Publisher.js"
