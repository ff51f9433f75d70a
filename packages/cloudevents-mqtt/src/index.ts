export * from "./Errors.js"
// The event: building it, its attributes and the input validators an extension checks its own with.
export {
  causationIdOf,
  type CloudEvent,
  type CloudEventInput,
  correlationIdOf,
  isUuid,
  JSON_CONTENT_TYPE,
  makeCloudEvent,
  MSGPACK_CONTENT_TYPE,
  scopeOf
} from "./CloudEvent.js"
export * from "./EventTypes.js"
export { attributeProblem, correlationProblem, isAttributeName, isRfc3339 } from "./Attributes.js"
export { codecFor, type Codec } from "./Payload.js"
// Binary mode: the event to and from an MQTT v5 publish.
export * from "./Binary.js"
export * from "./Topics.js"
// Where an island and its stations talk: push commands, station events.
export * from "./StationTopics.js"
export * from "./MqttString.js"
export * from "./Incoming.js"
export * from "./Reply.js"
// The connection: options (from `MQTT_*` variables too) and the service. The reconnect backoff is in `/testing`.
export { brokerPacketLimitOf, mqttDefaults, type MqttOptions, mqttOptionsConfig } from "./MqttOptions.js"
export type { IntakeHealth } from "./IntakeWatch.js"
export type { MqttSession, MqttStatus } from "./MqttClient.js"
export * from "./MqttConnection.js"
