export * from "./PollerOptions.js"
export * from "./PollerStats.js"
export { layer, makePoller, type Poller, ValkeyPoller } from "./Poller.js"
