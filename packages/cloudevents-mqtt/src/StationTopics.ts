import { Result } from "effect"
import type { InvalidTopic } from "./Errors.js"
import { type TopicConfig, validateLevel, validateLevels } from "./Topics.js"

/**
 * Where the island talks to its stations, for a prefix `P`, an optional discriminator `D` and a
 * station level `S` (default `station`):
 *
 * - push commands to a station: `P/S/{scope}[/D]/command`
 * - events from stations: `P/S/{scope}[/D]/events` (the island subscribes to `P/S/+[/D]/events`)
 * - station replies: the instance's response topic `P/replies/{instanceId}` (`responseTopic`)
 *
 * The command topic ends in `command`, not `commands`, so it can never match the island's own
 * command filters (`P[/+ ...][/D]/commands`): the island never receives what it sends a station.
 */
export interface StationTopicConfig extends TopicConfig {
  /** The level between the prefix and the scope; default `station`. */
  readonly stationLevel?: string | undefined
}

export const DEFAULT_STATION_LEVEL = "station"

const base = (config: StationTopicConfig) =>
  Result.gen(function* () {
    const prefix = yield* validateLevels("prefix", config.prefix)
    const level = yield* validateLevel("stationLevel", config.stationLevel ?? DEFAULT_STATION_LEVEL)
    const discriminator = config.discriminator === undefined ? undefined : yield* validateLevel("discriminator", config.discriminator)
    return { root: `${prefix}/${level}`, tail: discriminator === undefined ? "" : `/${discriminator}` }
  })

/** `P/S/{scope}[/D]/command`: where the island sends a push command for a scope. */
export const stationCommandTopic = (config: StationTopicConfig, scope: string): Result.Result<string, InvalidTopic> =>
  Result.gen(function* () {
    const { root, tail } = yield* base(config)
    return `${root}/${yield* validateLevel("scope", scope)}${tail}/command`
  })

/** `P/S/+[/D]/command`: what a station (or the simulated one) subscribes to for every scope. */
export const stationCommandFilter = (config: StationTopicConfig): Result.Result<string, InvalidTopic> =>
  Result.map(base(config), ({ root, tail }) => `${root}/+${tail}/command`)

/** `P/S/{scope}[/D]/events`: where a station publishes its pull events. */
export const stationEventsTopic = (config: StationTopicConfig, scope: string): Result.Result<string, InvalidTopic> =>
  Result.gen(function* () {
    const { root, tail } = yield* base(config)
    return `${root}/${yield* validateLevel("scope", scope)}${tail}/events`
  })

/** `P/S/+[/D]/events`: the island's subscription to the events of every station. */
export const stationEventsFilter = (config: StationTopicConfig): Result.Result<string, InvalidTopic> =>
  Result.map(base(config), ({ root, tail }) => `${root}/+${tail}/events`)

/** The scope level of a station topic (`P/S/{scope}[/D]/...`), for events that carry no subject. */
export const scopeOfStationTopic = (config: StationTopicConfig, topic: string): string | undefined => {
  const parts = Result.getOrUndefined(base(config))
  if (parts === undefined || !topic.startsWith(`${parts.root}/`)) return undefined
  const scope = topic.slice(parts.root.length + 1).split("/", 1)[0]
  return scope !== undefined && scope.length > 0 ? scope : undefined
}
