/**
 * `@microdcs/cloudevents-mqtt/testing`: for tests, not for production code. `reconnectDelay` is
 * the connection's reconnect backoff (exponential with jitter, between the bounds), so a test can
 * check its curve without waiting for reconnects.
 */
export { reconnectDelay } from "./MqttOptions.js"
