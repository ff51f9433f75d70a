export * from "./BatchOutcome.js"
// The options and what a handler gets (defaults and checks applied inside, at start).
export {
  type BatchHandlerOptions,
  DEFAULT_TRIM_INTERVAL_MS,
  type EntryHandlerOptions,
  type PollerEntry,
  type PollerOptions,
  type PollerSettings,
  type ScopedFamily
} from "./PollerOptions.js"
export type { PollerStats } from "./PollerStats.js"
// The poller: a scoped Effect, or a layer under the `ValkeyPoller` tag.
export { layer, makePoller, type Poller, ValkeyPoller } from "./Poller.js"
