import { Config, Effect, Option } from "effect"
import { Flag } from "effect/cli"
import type { MqttOptions, TopicConfig } from "@microdcs/cloudevents-mqtt"

/** The broker and topic flags both commands take; each falls back to the variable the island daemon reads. */
export const connectionFlags = {
  url: Flag.String("url").pipe(
    Flag.withMetavar("URL"),
    Flag.withDescription("The island's MQTT broker: mqtt://host:port or mqtts://host:port. Default: MQTT_URL, else mqtt://127.0.0.1:1883."),
    Flag.withFallbackConfig(Config.String("MQTT_URL").pipe(Config.withDefault("mqtt://127.0.0.1:1883")))
  ),
  prefix: Flag.String("prefix").pipe(
    Flag.withMetavar("PREFIX"),
    Flag.withDescription("The island's topic prefix. Default: MQTT_TOPIC_PREFIX, else microdcs."),
    Flag.withFallbackConfig(Config.String("MQTT_TOPIC_PREFIX").pipe(Config.withDefault("microdcs")))
  ),
  discriminator: Flag.String("discriminator").pipe(
    Flag.withMetavar("LEVEL"),
    Flag.withDescription("The island's topic discriminator, if it has one. Default: MQTT_DISCRIMINATOR."),
    Flag.optional
  )
}

/** The connection options: the URL, and the user and password from MQTT_USERNAME and MQTT_PASSWORD (never flags: a flag shows in the process list). */
export const mqttOptionsOf = (url: string) =>
  Effect.gen(function* () {
    const username = yield* Config.option(Config.String("MQTT_USERNAME"))
    const password = yield* Config.option(Config.Redacted("MQTT_PASSWORD"))
    const options: MqttOptions = {
      url,
      ...(Option.isSome(username) ? { username: username.value } : {}),
      ...(Option.isSome(password) ? { password: password.value } : {})
    }
    return options
  })

/** The topic layout from the flags; the discriminator falls back to MQTT_DISCRIMINATOR. */
export const topicsOf = (prefix: string, discriminator: Option.Option<string>) =>
  Effect.gen(function* () {
    const fromEnv = yield* Config.option(Config.String("MQTT_DISCRIMINATOR"))
    const level = Option.orElse(discriminator, () => fromEnv)
    const topics: TopicConfig = { prefix, ...(Option.isSome(level) ? { discriminator: level.value } : {}) }
    return topics
  })
