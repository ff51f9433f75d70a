import { randomBytes } from "node:crypto"
import { Result } from "effect"
import { InvalidTopic } from "./Errors.js"
import { mqttStringProblem, toMqttString } from "./MqttString.js"

/**
 * Topic layout of an island for a prefix `P` and an optional discriminator `D`:
 * commands on `P[/+ ...][/D]/commands`, events on `P/{subject with . as /}[/D]/events`, retained
 * metadata on `P[/D]/metadata`, replies on `P/replies/{instanceId}`. Every part is checked, so a
 * `+`, `#`, NUL or control character in a subject can never widen a subscription or break a packet.
 */
export interface TopicConfig {
  /** One or more topic levels, e.g. `microdcs` or `plant/island-1`. */
  readonly prefix: string
  /** One level that tells islands apart under a shared prefix. */
  readonly discriminator?: string | undefined
  /** How many `+` levels the command filters accept between prefix and discriminator (default 0). */
  readonly wildcardLevels?: number | undefined
}

/** Most `+` levels a command subscription may have: each level is one more SUBSCRIBE. */
export const MAX_WILDCARD_LEVELS = 8

const invalid = (part: string, value: string, message: string) => Result.fail(new InvalidTopic({ part, value, message }))

/** A topic or part quoted in a message: it may be hostile input, and messages end up in logs and error replies. */
const toLogText = (text: string) => toMqttString(text, 200)

const levelProblem = (level: string): string | undefined => {
  if (level.length === 0) return "has an empty level"
  if (level.includes("+") || level.includes("#")) return "contains a wildcard (+ or #)"
  return mqttStringProblem(level)
}

/** One or more `/`-separated levels without wildcards, empty levels, what MQTT strings may not hold, or a leading `$`. */
export const validateLevels = (part: string, value: string): Result.Result<string, InvalidTopic> => {
  if (value.startsWith("$")) return invalid(part, value, `${part} '${toLogText(value)}' starts with $, which is reserved for the broker`)
  for (const level of value.split("/")) {
    const problem = levelProblem(level)
    if (problem) return invalid(part, value, `${part} '${toLogText(value)}' ${problem}`)
  }
  return Result.succeed(value)
}

/** Exactly one level. */
export const validateLevel = (part: string, value: string): Result.Result<string, InvalidTopic> =>
  value.includes("/") ? invalid(part, value, `${part} '${value}' must be one topic level (no /)`) : validateLevels(part, value)

const base = (config: TopicConfig) =>
  Result.gen(function* () {
    const prefix = yield* validateLevels("prefix", config.prefix)
    const discriminator = config.discriminator === undefined ? undefined : yield* validateLevel("discriminator", config.discriminator)
    return { prefix, tail: discriminator === undefined ? "" : `/${discriminator}` }
  })

/** Command filters: `P/commands`, `P/+/commands`, ... up to the configured wildcard levels (with `/D`). */
export const commandFilters = (config: TopicConfig): Result.Result<ReadonlyArray<string>, InvalidTopic> =>
  Result.gen(function* () {
    const { prefix, tail } = yield* base(config)
    const levels = config.wildcardLevels ?? 0
    if (!Number.isInteger(levels) || levels < 0 || levels > MAX_WILDCARD_LEVELS) {
      return yield* invalid("wildcardLevels", String(levels), `wildcardLevels must be an integer from 0 to ${MAX_WILDCARD_LEVELS}`)
    }
    return Array.from({ length: levels + 1 }, (_, n) => `${prefix}${"/+".repeat(n)}${tail}/commands`)
  })

/**
 * `P/{scope}[/D]/commands`: where an MES sends the requests of one scope. The island's command
 * filters take it when they have at least one wildcard level (the daemon's default).
 */
export const commandTopic = (config: TopicConfig, scope: string): Result.Result<string, InvalidTopic> =>
  Result.gen(function* () {
    const { prefix, tail } = yield* base(config)
    return `${prefix}/${yield* validateLevel("scope", scope)}${tail}/commands`
  })

/** `$share/{group}/{filter}`: the broker hands each message to one member of the group. */
export const sharedFilter = (group: string, filter: string): Result.Result<string, InvalidTopic> =>
  Result.map(validateLevel("group", group), (g) => `$share/${g}/${filter}`)

/** The command filters as shared subscriptions of `group`. */
export const sharedCommandFilters = (config: TopicConfig, group: string): Result.Result<ReadonlyArray<string>, InvalidTopic> =>
  Result.flatMap(commandFilters(config), (filters) => Result.all(filters.map((f) => sharedFilter(group, f))))

/** `P/{subject with . as /}[/D]/events`. */
export const eventsTopic = (config: TopicConfig, subject: string): Result.Result<string, InvalidTopic> =>
  Result.gen(function* () {
    const { prefix, tail } = yield* base(config)
    const path = yield* validateLevels("subject", subject.replaceAll(".", "/"))
    return `${prefix}/${path}${tail}/events`
  })

/** `P[/D]/metadata`, where the island's retained metadata lives. */
export const metadataTopic = (config: TopicConfig): Result.Result<string, InvalidTopic> =>
  Result.map(base(config), ({ prefix, tail }) => `${prefix}${tail}/metadata`)

/** `P/replies/{instanceId}`: each instance has its own, so replies never land at a sibling. */
export const responseTopic = (config: TopicConfig, instanceId: string): Result.Result<string, InvalidTopic> =>
  Result.gen(function* () {
    const { prefix } = yield* base(config)
    const id = yield* validateLevel("instanceId", instanceId)
    return `${prefix}/replies/${id}`
  })

/**
 * `{base}-{16 hex}`: a client id of its own for every connection, so two processes (or two roles
 * of one process) never take over each other's session. The base is what MQTT 5 guarantees every
 * broker accepts, plus `.`, `_` and `-`.
 */
export const uniqueClientId = (clientIdBase: string): Result.Result<string, InvalidTopic> =>
  /^[A-Za-z0-9._-]{1,64}$/.test(clientIdBase)
    ? Result.succeed(`${clientIdBase}-${randomBytes(8).toString("hex")}`)
    : invalid("clientIdBase", clientIdBase, `client id base '${clientIdBase}' must be 1 to 64 of A-Z a-z 0-9 . _ -`)

/** An exact client id (for a persistent session): the same characters as a base, at most 128. */
export const validateClientId = (clientId: string): Result.Result<string, InvalidTopic> =>
  /^[A-Za-z0-9._-]{1,128}$/.test(clientId)
    ? Result.succeed(clientId)
    : invalid("clientId", clientId, `client id '${clientId}' must be 1 to 128 of A-Z a-z 0-9 . _ -`)

/** A topic to publish to: non-empty, no wildcards, a valid MQTT string (no NUL or control character, at most 65535 bytes). */
export const validateTopicName = (topic: string): Result.Result<string, InvalidTopic> => {
  if (topic.length === 0) return invalid("topic", topic, "topic is empty")
  if (/[+#]/.test(topic)) return invalid("topic", topic, `topic '${toLogText(topic)}' contains a wildcard`)
  const problem = mqttStringProblem(topic)
  if (problem) return invalid("topic", topic, `topic '${toLogText(topic)}' ${problem}`)
  return Result.succeed(topic)
}

/**
 * A request's Response Topic, before a reply is sent to it: a topic name that is not one of the
 * broker's own (`$SYS/...`, `$share/...`). The broker refuses a publish there (PUBACK 135), so
 * the reply could never be delivered.
 */
export const validateResponseTopic = (topic: string): Result.Result<string, InvalidTopic> =>
  topic.startsWith("$")
    ? invalid("responseTopic", topic, `response topic '${toLogText(topic)}' starts with $, which is reserved for the broker`)
    : Result.mapError(validateTopicName(topic), (error) => new InvalidTopic({ ...error, part: "responseTopic" }))

/** The filter without a `$share/{group}/` prefix: what topics it matches. */
export const unshared = (filter: string): string => {
  const match = /^\$share\/[^/]+\/(.*)$/s.exec(filter)
  return match ? match[1] ?? "" : filter
}

/** A filter to subscribe to: `+` and `#` only as whole levels, `#` last; a `$share/{group}/` form is allowed. */
export const validateFilter = (filter: string): Result.Result<string, InvalidTopic> => {
  if (filter.startsWith("$share/") && !/^\$share\/[^/+#]+\/./s.test(filter)) {
    return invalid("filter", filter, `shared filter '${filter}' must be $share/{group}/{filter}`)
  }
  const levels = unshared(filter).split("/")
  for (const [i, level] of levels.entries()) {
    const ok = level === "+" || (level === "#" && i === levels.length - 1) || !/[+#]/.test(level)
    if (!ok) return invalid("filter", filter, `filter '${filter}' has a wildcard inside a level or # before the last level`)
  }
  if (filter.length === 0) return invalid("filter", filter, "filter is empty")
  const problem = mqttStringProblem(filter)
  if (problem) return invalid("filter", filter, `filter '${toLogText(filter)}' ${problem}`)
  return Result.succeed(filter)
}

/** MQTT matching: `+` is one level, `#` the rest (parent included); wildcards never match a leading `$`. */
export const topicMatches = (filter: string, topic: string): boolean => {
  const f = unshared(filter).split("/")
  const t = topic.split("/")
  if (topic.startsWith("$") && (f[0] === "+" || f[0] === "#")) return false
  for (let i = 0; i < f.length; i++) {
    if (f[i] === "#") return true
    if (i >= t.length) return false
    if (f[i] !== "+" && f[i] !== t[i]) return false
  }
  return f.length === t.length
}
