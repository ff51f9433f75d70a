import type { IClientPublishOptions } from "mqtt"

/**
 * The size of the PUBLISH packet mqtt.js (mqtt-packet) writes for a message, counted the way it
 * counts: fixed header, remaining length, topic, packet id, properties, payload. Exact for what this
 * package sends; compared with the broker's Maximum Packet Size before a message is handed over.
 */

type Properties = NonNullable<IClientPublishOptions["properties"]>

/** Bytes of a variable byte integer (MQTT 5 §1.5.5). */
const varIntBytes = (n: number): number => (n < 128 ? 1 : n < 16_384 ? 2 : n < 2_097_152 ? 3 : 4)

const stringBytes = (text: string): number => 2 + Buffer.byteLength(text)

const userPropertiesBytes = (pairs: NonNullable<Properties["userProperties"]>): number => {
  let bytes = 0
  for (const name of Object.getOwnPropertyNames(pairs)) {
    const nameBytes = stringBytes(name)
    for (const value of [pairs[name]].flat()) bytes += 1 + nameBytes + stringBytes(String(value))
  }
  return bytes
}

/** The properties as written, their length field not included. */
const propertiesBytes = (p: Properties): number => {
  let bytes = 0
  if (p.payloadFormatIndicator !== undefined) bytes += 2
  if (p.messageExpiryInterval !== undefined) bytes += 5
  if (p.topicAlias !== undefined) bytes += 3
  if (p.responseTopic !== undefined) bytes += 1 + stringBytes(p.responseTopic)
  if (p.correlationData !== undefined) bytes += 1 + 2 + Buffer.byteLength(p.correlationData)
  if (p.userProperties !== undefined) bytes += userPropertiesBytes(p.userProperties)
  for (const id of p.subscriptionIdentifier === undefined ? [] : [p.subscriptionIdentifier].flat()) bytes += 1 + varIntBytes(id)
  if (p.contentType !== undefined) bytes += 1 + stringBytes(p.contentType)
  return bytes
}

/** The whole PUBLISH packet's bytes for MQTT 5. */
export const publishPacketBytes = (topic: string, payload: Buffer, options: IClientPublishOptions): number => {
  const properties = options.properties === undefined ? 0 : propertiesBytes(options.properties)
  const remaining = stringBytes(topic) + ((options.qos ?? 0) > 0 ? 2 : 0) + varIntBytes(properties) + properties + payload.length
  return 1 + varIntBytes(remaining) + remaining
}
