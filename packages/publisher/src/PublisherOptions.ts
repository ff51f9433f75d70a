import { randomBytes } from "node:crypto"
import { hostname } from "node:os"
import { Effect, Result } from "effect"
import { validateLevel, validateLevels } from "@microdcs/cloudevents-mqtt"
import { InvalidInput } from "@microdcs/store"

/** How the publisher names its topics and how it keeps its lease. Every field has a default. */
export interface PublisherOptions {
  /** Topic prefix `P`, one or more levels (default `microdcs`). */
  readonly prefix?: string | undefined
  /** Optional discriminator `D`, one level: topics are `P[/D]/{scope}/...`. */
  readonly discriminator?: string | undefined
  /** CloudEvent `source` of what is published (default `urn:microdcs:publisher`). */
  readonly source?: string | undefined
  /** The lease holder id; unique per process (default `{hostname}-{pid}-{random}`). */
  readonly instanceId?: string | undefined
  /** Lease lifetime (default 15 s). The lease is renewed every third of it. */
  readonly leaseTtlMs?: number | undefined
  /** How often a standby tries to take the lease (default a third of the TTL). */
  readonly acquireIntervalMs?: number | undefined
  /** Change entries read per batch (default 100, at most 10 000). */
  readonly batchSize?: number | undefined
  /** MQTT message expiry of every retained message (default 48 h). */
  readonly messageExpirySeconds?: number | undefined
  /** Every scope is re-read this often even without a nudge (default 1 s). */
  readonly fallbackIntervalMs?: number | undefined
  /** Scopes followed at once (default 4). */
  readonly scopeConcurrency?: number | undefined
  /**
   * Largest payload of one retained message (default 256 KiB, the MQTT connection's default).
   * The state index is cut into pages of at most this many bytes. Set it to the MQTT
   * connection's `maxPayloadBytes` (or lower): a page over the connection's limit is not sent.
   */
  readonly maxPayloadBytes?: number | undefined
  /**
   * The state index of a scope goes out at most this often (default 1000 ms; 0: after every
   * batch). Each index carries every job of the scope, so publishing it per batch costs the
   * whole index per batch; order topics and status events are not paced.
   */
  readonly stateIndexIntervalMs?: number | undefined
}

export interface ResolvedPublisherOptions {
  readonly prefix: string
  readonly discriminator: string | undefined
  readonly source: string
  readonly instanceId: string
  readonly leaseTtlMs: number
  readonly renewIntervalMs: number
  readonly acquireIntervalMs: number
  readonly batchSize: number
  readonly messageExpirySeconds: number
  readonly fallbackIntervalMs: number
  readonly scopeConcurrency: number
  readonly maxPayloadBytes: number
  readonly stateIndexIntervalMs: number
}

export const publisherDefaults = {
  prefix: "microdcs",
  source: "urn:microdcs:publisher",
  leaseTtlMs: 15_000,
  batchSize: 100,
  messageExpirySeconds: 48 * 3600,
  fallbackIntervalMs: 1000,
  scopeConcurrency: 4,
  maxPayloadBytes: 256 * 1024,
  stateIndexIntervalMs: 1000
} as const

/** MQTT's largest packet (268 435 455 bytes): no payload can be larger. */
const MQTT_MAX_PACKET_BYTES = 268_435_455

export const defaultInstanceId = (): string => `${hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`

const integer = (field: string, value: number, min: number, max = Number.MAX_SAFE_INTEGER): Effect.Effect<number, InvalidInput> =>
  Number.isSafeInteger(value) && value >= min && value <= max
    ? Effect.succeed(value)
    : Effect.fail(new InvalidInput({ field, message: `${field} must be an integer from ${min} to ${max}, got ${value}` }))

/** A topic part, refused as InvalidInput naming the option: a bad option is a configuration error. */
const topicPart = (field: string, check: Result.Result<string, { readonly message: string }>): Effect.Effect<string, InvalidInput> =>
  Result.match(check, {
    onFailure: (e) => Effect.fail(new InvalidInput({ field, message: e.message })),
    onSuccess: Effect.succeed
  })

const text = (field: string, value: string): Effect.Effect<string, InvalidInput> =>
  typeof value === "string" && value.length > 0 && value.length <= 512 && value.isWellFormed()
    ? Effect.succeed(value)
    : Effect.fail(new InvalidInput({ field, message: `${field} must be 1 to 512 characters of well-formed text` }))

/** Applies defaults and checks every option once, at start. */
export const resolvePublisherOptions = (options: PublisherOptions = {}): Effect.Effect<ResolvedPublisherOptions, InvalidInput> =>
  Effect.gen(function* () {
    const prefix = yield* topicPart("prefix", validateLevels("prefix", options.prefix ?? publisherDefaults.prefix))
    const discriminator =
      options.discriminator === undefined ? undefined : yield* topicPart("discriminator", validateLevel("discriminator", options.discriminator))
    // The TTL must leave room for three renewals; PX needs whole milliseconds.
    const leaseTtlMs = yield* integer("leaseTtlMs", options.leaseTtlMs ?? publisherDefaults.leaseTtlMs, 300)
    const renewIntervalMs = Math.floor(leaseTtlMs / 3)
    return {
      prefix,
      discriminator,
      source: yield* text("source", options.source ?? publisherDefaults.source),
      instanceId: yield* text("instanceId", options.instanceId ?? defaultInstanceId()),
      leaseTtlMs,
      renewIntervalMs,
      acquireIntervalMs: yield* integer("acquireIntervalMs", options.acquireIntervalMs ?? renewIntervalMs, 1),
      batchSize: yield* integer("batchSize", options.batchSize ?? publisherDefaults.batchSize, 1, 10_000),
      messageExpirySeconds: yield* integer(
        "messageExpirySeconds",
        options.messageExpirySeconds ?? publisherDefaults.messageExpirySeconds,
        1,
        0xffffffff
      ),
      fallbackIntervalMs: yield* integer("fallbackIntervalMs", options.fallbackIntervalMs ?? publisherDefaults.fallbackIntervalMs, 1),
      scopeConcurrency: yield* integer("scopeConcurrency", options.scopeConcurrency ?? publisherDefaults.scopeConcurrency, 1, 256),
      // A page must hold its envelope and at least one row.
      maxPayloadBytes: yield* integer("maxPayloadBytes", options.maxPayloadBytes ?? publisherDefaults.maxPayloadBytes, 1024, MQTT_MAX_PACKET_BYTES),
      stateIndexIntervalMs: yield* integer("stateIndexIntervalMs", options.stateIndexIntervalMs ?? publisherDefaults.stateIndexIntervalMs, 0, 3_600_000)
    }
  })
