import { Result } from "effect"
import { type InvalidTopic, validateLevel } from "@microdcs/cloudevents-mqtt"

/**
 * The publisher's retained topics, beside the binding's `P[/D]/metadata`: the
 * discriminator follows the prefix, as it does for metadata, so one subscription `P/D/#` sees
 * everything one island publishes and nothing of its neighbours under the same prefix.
 *
 * - `P[/D]/{scope}/order/{jobOrderId}`
 * - `P[/D]/{scope}/result/{jobOrderId}` (keyed by the job ORDER id, not the response id)
 * - `P[/D]/{scope}/state-index` (the head of the index) and `P[/D]/{scope}/state-index/{n}` (its further pages)
 *
 * Scope and id are one level each: an id with `/`, `+`, `#`, NUL or a leading `$` has no topic
 * (InvalidTopic) rather than a topic that a wildcard subscription would misread.
 */
export interface PublisherTopicConfig {
  /** Already validated (PublisherOptions). */
  readonly prefix: string
  readonly discriminator: string | undefined
}

export type JobTopicKind = "order" | "result"

const scopeBase = (config: PublisherTopicConfig, scope: string): Result.Result<string, InvalidTopic> =>
  Result.map(validateLevel("scope", scope), (s) =>
    config.discriminator === undefined ? `${config.prefix}/${s}` : `${config.prefix}/${config.discriminator}/${s}`
  )

/** `P[/D]/{scope}/{order|result}/{jobOrderId}`. */
export const jobTopic = (config: PublisherTopicConfig, kind: JobTopicKind, scope: string, jobOrderId: string): Result.Result<string, InvalidTopic> =>
  Result.gen(function* () {
    const base = yield* scopeBase(config, scope)
    const id = yield* validateLevel("jobOrderId", jobOrderId)
    return `${base}/${kind}/${id}`
  })

/** `P[/D]/{scope}/state-index`. */
export const stateIndexTopic = (config: PublisherTopicConfig, scope: string): Result.Result<string, InvalidTopic> =>
  Result.map(scopeBase(config, scope), (base) => `${base}/state-index`)

/** `P[/D]/{scope}/state-index/{page}`: page 1 and up of an index too large for one message. */
export const stateIndexPageTopic = (config: PublisherTopicConfig, scope: string, page: number): Result.Result<string, InvalidTopic> =>
  Result.map(stateIndexTopic(config, scope), (head) => `${head}/${page}`)

/**
 * `P[/D]/#`: everything the publisher retains for one island (without a discriminator it also
 * matches the island's commands, events and metadata under `P`).
 */
export const publisherFilter = (config: PublisherTopicConfig): string =>
  config.discriminator === undefined ? `${config.prefix}/#` : `${config.prefix}/${config.discriminator}/#`
