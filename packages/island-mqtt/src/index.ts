// The station topics live with the other topic builders in cloudevents-mqtt (a station needs no island
// package to find them); re-exported here, where the station port and ingress use them.
export {
  DEFAULT_STATION_LEVEL,
  scopeOfStationTopic,
  stationCommandFilter,
  stationCommandTopic,
  stationEventsFilter,
  stationEventsTopic,
  type StationTopicConfig
} from "@microdcs/cloudevents-mqtt"
// The shared worker (its retry schedule stays inside).
export { hold, type Hold, holdDelayMs, runWorker, workerDefaults, type WorkerOptions, type WorkerOutcome } from "./MessageWorker.js"
export * from "./JobControlEvents.js"
export * from "./JobControlIngress.js"
export * from "./MqttStationPort.js"
export * from "./StationIngress.js"
export * from "./SimulatedStation.js"
// Triggers: the events ingress that starts triggered job orders, and the change announcements.
export * from "./TriggerIngress.js"
export * from "./TriggerChanges.js"
