import { type Config, Result } from "effect"
import { commandFilters, responseTopic, sharedCommandFilters, validateClientId } from "@microdcs/cloudevents-mqtt"
import { allProblems, invalidSetting } from "./ConfigChecks.js"
import type { DaemonConfig } from "./DaemonConfig.js"

/**
 * The MQTT names the settings make (command filters, client id), checked with the MQTT
 * package's own rules before anything starts. A module of its own, loaded after the plain
 * configuration: the MQTT package takes a moment to load, and a plain bad value is reported
 * before that.
 */

/** The variable that sets each part of the MQTT topic layout. */
const topicVariables: Readonly<Record<string, string>> = {
  prefix: "MQTT_TOPIC_PREFIX",
  discriminator: "MQTT_DISCRIMINATOR",
  wildcardLevels: "MQTT_WILDCARD_LEVELS",
  group: "MQTT_SHARED_GROUP"
}

/** Every problem, by variable, or `undefined` when the names are fine. */
export const mqttNamesProblem = (config: DaemonConfig): Config.ConfigError | undefined => {
  const problems: Array<Config.ConfigError> = []
  const topics = { prefix: config.mqtt.topicPrefix, discriminator: config.mqtt.discriminator, wildcardLevels: config.mqtt.wildcardLevels }
  const filters = config.mqtt.sharedGroup === undefined ? commandFilters(topics) : sharedCommandFilters(topics, config.mqtt.sharedGroup)
  if (Result.isFailure(filters)) problems.push(invalidSetting(topicVariables[filters.failure.part] ?? "MQTT_TOPIC_PREFIX", filters.failure.message))
  // The instance id names the MQTT client `island-{id}`.
  if (Result.isFailure(validateClientId(`island-${config.instanceId}`))) {
    problems.push(invalidSetting("ISLAND_INSTANCE_ID", `must be 1 to 121 of A-Z a-z 0-9 . _ - (it names the MQTT client island-{id}), got '${config.instanceId}'`))
  }
  return allProblems(problems)
}

/**
 * Where this instance's MQTT connection sends its intake probes: under its own reply topic
 * (`P/replies/{instanceId}/probe`), one level below anything the island or a station subscribes to.
 */
export const intakeProbeTopic = (config: DaemonConfig): string | undefined =>
  Result.getOrUndefined(Result.map(responseTopic({ prefix: config.mqtt.topicPrefix }, config.instanceId), (topic) => `${topic}/probe`))
