import { Ajv2020 } from "ajv/dist/2020.js"
import addFormats from "ajv-formats"
import { contractDocument, DATA_OPTIONAL, type JsonObject, payloadSchemas } from "@microdcs/contract"

/**
 * Judges MQTT messages as they travelled by the island's AsyncAPI contract: which channel a
 * message is on (its topic against the channel addresses, or a reply on a Response Topic a
 * request named), which of the channel's messages it is (by its CloudEvent type), and whether
 * its user properties, content type, Correlation Data and payload are that message's. Not a test
 * file itself.
 */

/** One message as the broker delivered it. */
export interface CapturedMessage {
  readonly topic: string
  readonly payload: Buffer
  readonly contentType: string | undefined
  readonly userProperties: Readonly<Record<string, string | ReadonlyArray<string>>>
  readonly correlationData: Buffer | undefined
  readonly responseTopic: string | undefined
}

interface MessageObject {
  readonly contentType?: string
  readonly headers?: { readonly allOf: ReadonlyArray<{ readonly properties?: { readonly type?: { readonly const?: string } } }> }
  readonly payload?: { readonly $ref: string }
  readonly bindings?: { readonly mqtt?: { readonly correlationData?: unknown } }
  readonly [DATA_OPTIONAL]?: boolean
}

interface Contract {
  readonly channels: Readonly<Record<string, { readonly address: string | null; readonly messages: Readonly<Record<string, { readonly $ref: string }>> }>>
  readonly operations: Readonly<Record<string, { readonly channel: { readonly $ref: string }; readonly reply?: { readonly channel?: { readonly $ref: string } } }>>
  readonly components: {
    readonly messages: Readonly<Record<string, MessageObject>>
    readonly schemas: Readonly<Record<string, { readonly schema?: { readonly $ref: string } }>>
  }
}

const DOCUMENT_ID = "urn:microdcs:contract"
const lastPart = (ref: string): string => ref.split("/").at(-1) ?? ref
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** What a channel parameter matches in a topic of an island without a discriminator. */
const parameterPattern = (name: string, prefix: string): string => {
  if (name === "prefix") return escape(prefix)
  if (name === "discriminator") return ""
  return name === "scope" || name === "eventPath" ? "[^/]+(?:/[^/]+)*" : "[^/]+"
}

const addressPattern = (address: string, prefix: string): RegExp =>
  new RegExp(`^${address.split(/(\{\w+\})/).map((part) => (/^\{\w+\}$/.test(part) ? parameterPattern(part.slice(1, -1), prefix) : escape(part))).join("")}$`)

export interface ContractCheckOptions {
  readonly prefix: string
  /** Payload schemas to use instead of the contract's, by `$id`. */
  readonly substitutes?: Readonly<Record<string, JsonObject>>
}

export interface Verdict {
  /** The channel and message it is, or why it is none of the contract's. */
  readonly channel?: string
  readonly message?: string
  readonly problems: ReadonlyArray<string>
}

/** What judging needs: the document, a validator that knows its schemas, the channel addresses. */
interface Checker {
  readonly contract: Contract
  readonly ajv: Ajv2020
  /** The most specific address first (the most fixed text): a station's event is a trigger event too, but a station event first. */
  readonly patterns: ReadonlyArray<{ readonly name: string; readonly pattern: RegExp }>
  /** The channel of the replies to a request channel's messages, from the operations with a reply. */
  readonly replyChannelOf: ReadonlyMap<string, string>
}

const checkerOf = (options: ContractCheckOptions): Checker => {
  const contract = contractDocument() as unknown as Contract
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats.default(ajv)
  for (const [id, schema] of Object.entries({ ...payloadSchemas(), ...options.substitutes })) ajv.addSchema(schema, id)
  ajv.addSchema({ ...contractDocument(), $id: DOCUMENT_ID }, DOCUMENT_ID, undefined, false)
  const fixedText = (address: string) => address.replace(/\{\w+\}/g, "").length
  const patterns = Object.entries(contract.channels)
    .flatMap(([name, channel]) => (channel.address === null ? [] : [{ name, pattern: addressPattern(channel.address, options.prefix), fixed: fixedText(channel.address) }]))
    .sort((a, b) => b.fixed - a.fixed)
  const replyChannelOf = new Map(
    Object.values(contract.operations).flatMap((op) => (op.reply?.channel === undefined ? [] : [[lastPart(op.channel.$ref), lastPart(op.reply.channel.$ref)] as const]))
  )
  return { contract, ajv, patterns, replyChannelOf }
}

type Validate = ((value: unknown) => boolean) & { readonly errors?: ReadonlyArray<{ readonly instancePath: string; readonly message?: string }> | null }

const errorsOf = (validate: Validate, value: unknown, what: string) =>
  validate(value) ? [] : (validate.errors ?? []).map((e) => `${what}${e.instancePath} ${e.message ?? "invalid"}`)

/** The payload's problems as the message `spec` describes it (content type, Correlation Data, schema). */
const payloadProblems = (checker: Checker, spec: MessageObject & { readonly payload: { readonly $ref: string } }, message: CapturedMessage): ReadonlyArray<string> => {
  const problems: Array<string> = []
  if (message.contentType !== spec.contentType) problems.push(`content type ${message.contentType}, not ${spec.contentType}`)
  const correlation = spec.bindings?.mqtt?.correlationData
  if (message.correlationData !== undefined && (correlation === undefined || message.correlationData.length !== 16)) {
    problems.push(`Correlation Data of ${message.correlationData.length} bytes${correlation === undefined ? " where the message has none" : ", not a UUID's 16"}`)
  }
  let data: unknown
  try {
    data = JSON.parse(message.payload.toString("utf8"))
  } catch {
    return [...problems, "the payload is not JSON"]
  }
  const schemaId = checker.contract.components.schemas[lastPart(spec.payload.$ref)]?.schema?.$ref
  return [...problems, ...errorsOf(checker.ajv.getSchema(schemaId ?? "")!, data, "payload")]
}

/** Why `message` is not the contract's message `name` (nothing when it is). */
const judge = (checker: Checker, name: string, message: CapturedMessage): ReadonlyArray<string> => {
  const spec = checker.contract.components.messages[name]!
  const problems: Array<string> = []
  if (spec.headers === undefined) {
    if (Object.keys(message.userProperties).length > 0) problems.push("user properties where the message has none")
  } else problems.push(...errorsOf(checker.ajv.getSchema(`${DOCUMENT_ID}#/components/messages/${name}/headers`)!, message.userProperties, "user properties"))
  if (spec.payload === undefined || message.payload.length === 0) {
    return message.contentType === undefined ? problems : [...problems, `content type ${message.contentType} without a payload`]
  }
  return [...problems, ...payloadProblems(checker, { ...spec, payload: spec.payload }, message)]
}

/**
 * The messages a captured message may be: those of its channels that name its CloudEvent type,
 * else those that take any type; and of these, the ones that take its payload (or none).
 */
const candidatesOf = ({ contract }: Checker, channels: ReadonlyArray<string>, message: CapturedMessage) => {
  const all = channels.flatMap((channel) => Object.values(contract.channels[channel]!.messages).map(({ $ref }) => ({ channel, name: lastPart($ref) })))
  const typeOf = (name: string) => contract.components.messages[name]!.headers?.allOf[1]?.properties?.type?.const
  const exact = all.filter(({ name }) => typeOf(name) !== undefined && typeOf(name) === message.userProperties["type"])
  const takesNoData = (spec: MessageObject) => spec.payload === undefined || spec[DATA_OPTIONAL] === true
  const fits = (spec: MessageObject) => (message.payload.length === 0 ? takesNoData(spec) : spec.payload !== undefined)
  return (exact.length > 0 ? exact : all.filter(({ name }) => typeOf(name) === undefined)).filter(({ name }) => fits(contract.components.messages[name]!))
}

const channelsOf = (checker: Checker, topic: string) => checker.patterns.flatMap(({ name, pattern }) => (pattern.test(topic) ? [name] : []))

/** Each Response Topic a request named, with the channel of its replies. */
const replyTopicsOf = (checker: Checker, messages: ReadonlyArray<CapturedMessage>): ReadonlyMap<string, string> => {
  const replyTopics = new Map<string, string>()
  for (const m of messages) {
    const reply = channelsOf(checker, m.topic).map((c) => checker.replyChannelOf.get(c)).find((c) => c !== undefined)
    if (reply !== undefined && m.responseTopic !== undefined) replyTopics.set(m.responseTopic, reply)
  }
  return replyTopics
}

const verdictOf = (checker: Checker, replyTopics: ReadonlyMap<string, string>, m: CapturedMessage): Verdict => {
  const replyChannel = replyTopics.get(m.topic)
  const channels = replyChannel === undefined ? channelsOf(checker, m.topic) : [replyChannel]
  if (channels.length === 0) return { problems: ["on a topic of no channel"] }
  const candidates = candidatesOf(checker, channels, m)
  if (candidates.length === 0) return { problems: [`no message of ${channels.join(", ")} has type ${String(m.userProperties["type"])}${m.payload.length === 0 ? " and no payload" : ""}`] }
  const verdicts = candidates.map((c) => ({ ...c, problems: judge(checker, c.name, m) }))
  const fits = verdicts.find((v) => v.problems.length === 0)
  return fits !== undefined
    ? { channel: fits.channel, message: fits.name, problems: [] }
    : { problems: verdicts.map((v) => `as ${v.channel}/${v.name}: ${v.problems.join("; ")}`) }
}

/**
 * `check` judges each message (a reply is recognised by the Response Topic of a request among
 * them); `messages` lists every message of every channel, as `{channel}/{message}`.
 */
export const makeContractCheck = (options: ContractCheckOptions) => {
  const checker = checkerOf(options)
  const check = (messages: ReadonlyArray<CapturedMessage>): ReadonlyArray<Verdict> => {
    const replyTopics = replyTopicsOf(checker, messages)
    return messages.map((m) => verdictOf(checker, replyTopics, m))
  }
  const messages = Object.entries(checker.contract.channels).flatMap(([channel, { messages }]) => Object.values(messages).map(({ $ref }) => `${channel}/${lastPart($ref)}`))
  return { check, messages } as const
}
