import { Data, Effect } from "effect"
import { brokerPacketLimitOf } from "@microdcs/cloudevents-mqtt"
import { startMosquitto, startValkeyServer } from "@microdcs/embedded"
import type { DaemonConfig } from "./DaemonConfig.js"

/** An embedded server could not be started (most often: its binary is not installed). */
export class EmbeddedServerFailed extends Data.TaggedError("EmbeddedServerFailed")<{
  readonly server: "valkey" | "mosquitto"
  readonly message: string
}> {}

const child = <S extends { readonly url: string; readonly stop: () => Promise<void> }>(
  server: "valkey" | "mosquitto",
  start: () => Promise<S>
) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: start,
      catch: (error) => new EmbeddedServerFailed({ server, message: error instanceof Error ? error.message : String(error) })
    }).pipe(Effect.tap((s) => Effect.logInfo(`embedded ${server} started`).pipe(Effect.annotateLogs({ url: s.url })))),
    (s) => Effect.promise(() => s.stop()).pipe(Effect.andThen(Effect.logInfo(`embedded ${server} stopped`)))
  )

/**
 * The embedded default: with no Valkey or MQTT URL set, the daemon starts its own
 * `valkey-server` (or `redis-server`) and `mosquitto` as children on free loopback ports with a
 * temporary data dir, and stops them when its scope closes. Returns the config with the URLs set.
 */
export const withEmbeddedServers = (config: DaemonConfig) =>
  Effect.gen(function* () {
    const valkeyUrl = config.embeddedValkey ? (yield* child("valkey", () => startValkeyServer())).url : config.valkey.url
    // Its packet limit matches the one the island announces: a larger message is refused at its
    // sender instead of being dropped on its way to the island (which costs an in-flight slot).
    const mqttUrl = config.mqtt.url ?? (yield* child("mosquitto", () => startMosquitto({ maxPacketSize: brokerPacketLimitOf(config.mqtt.limits) }))).url
    return {
      ...config,
      valkey: { ...config.valkey, url: valkeyUrl },
      mqtt: { ...config.mqtt, url: mqttUrl }
    } satisfies DaemonConfig
  })
