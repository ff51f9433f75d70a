import { channels, parameters } from "./Channels.js"
import { CLOUD_EVENT_ATTRIBUTES, cloudEventAttributes } from "./Headers.js"
import {
  errorReply,
  metadataDocument,
  orderDocument,
  resultDocument,
  stateIndexDocument,
  stationCommand,
  stationEvent,
  stationReply,
  statusEvent,
  triggerEvent,
  triggersChanged
} from "./IslandMessages.js"
import type { Json, JsonObject } from "./Json.js"
import { DATA_OPTIONAL, replyMessage, requestMessage, retainedDeletion } from "./Messages.js"
import { operations } from "./Operations.js"
import { payloadSchemaId } from "./PayloadSchemas.js"
import { requestKinds } from "./Requests.js"
import { SCHEMA_BASE } from "./SchemaIds.js"

/** The version of the contract: grows when a channel or message changes incompatibly. */
export const CONTRACT_VERSION = "1.0.0"

/** How the payload schemas are written: JSON Schema 2020-12, which AsyncAPI 3 takes as a multi-format schema. */
export const PAYLOAD_SCHEMA_FORMAT = "application/schema+json;version=draft-2020-12"

const description = [
  "The MQTT v5 contract of a microdcs island: what an MES, a station and a dashboard send and receive.",
  "",
  "Every message is a CloudEvent 1.0 in MQTT binary mode: the data is the payload, `datacontenttype` the MQTT Content Type,",
  "`correlationid` (a UUID) the 16 bytes of the MQTT Correlation Data, and every other attribute a user property of the same name",
  `(the message's headers). The island sends QoS 1. A message marked \`${DATA_OPTIONAL}\` may carry no data: zero bytes, no content type.`,
  "Payloads are shown as `application/json`; a request may also be MessagePack (`application/msgpack`), and its reply then is too.",
  "",
  `Payload schemas are JSON Schema 2020-12, referenced by their \`$id\`; the repository publishes each \`${SCHEMA_BASE}{name}/v{x.y.z}/\``,
  "as `docs/schemas/{name}/v{x.y.z}/schema.json`. `docs/integrator/protocol.md` walks through the same contract by hand."
].join("\n")

const otherMessages: ReadonlyArray<JsonObject> = [
  errorReply,
  statusEvent,
  stationCommand,
  stationReply,
  stationEvent,
  triggerEvent,
  triggersChanged,
  orderDocument,
  resultDocument,
  stateIndexDocument,
  metadataDocument,
  retainedDeletion
]

/** Every message by its name. */
const messages = (): Readonly<Record<string, JsonObject>> => {
  const all = [
    ...requestKinds().flatMap((kind) => kind.variants.map((variant) => requestMessage(kind, variant))),
    ...requestKinds().map(replyMessage),
    ...otherMessages
  ]
  return Object.fromEntries(all.map((m) => [m["name"] as string, m]))
}

/** The payload schemas the messages name, each a reference to the schema by its `$id`. */
const schemas = (all: Readonly<Record<string, JsonObject>>): JsonObject => {
  const names = [...new Set(Object.values(all).flatMap((m) => (m["payload"] === undefined ? [] : [String((m["payload"] as { $ref: string }).$ref).split("/").at(-1)!])))]
  return {
    [CLOUD_EVENT_ATTRIBUTES]: cloudEventAttributes,
    ...Object.fromEntries(names.sort().map((name) => [name, { schemaFormat: PAYLOAD_SCHEMA_FORMAT, schema: { $ref: payloadSchemaId(name) } } satisfies Json]))
  }
}

/** The island's MQTT contract as an AsyncAPI 3.0 document. */
export const contractDocument = (): JsonObject => {
  const all = messages()
  return {
    asyncapi: "3.0.0",
    info: { title: "microdcs island", version: CONTRACT_VERSION, description },
    defaultContentType: "application/json",
    servers: {
      broker: {
        host: "{host}",
        protocol: "mqtt",
        protocolVersion: "5",
        description: "The island's MQTT v5 broker (`MQTT_URL`; `mqtts` with TLS).",
        variables: { host: { default: "localhost:1883", description: "Host and port of the broker." } }
      }
    },
    channels: channels(),
    operations: operations(),
    components: { schemas: schemas(all), messages: all, parameters }
  }
}
