import { createRequire } from "node:module"
import { describe, expect, it } from "vitest"
import fc from "fast-check"
import type { IClientPublishOptions } from "mqtt"
import { publishPacketBytes } from "../src/PacketSize.js"

/** mqtt.js's own encoder, reached through mqtt's dependency: what the client would write. */
const mqttPacket = createRequire(createRequire(import.meta.url).resolve("mqtt"))("mqtt-packet") as {
  generate: (packet: object, opts: { protocolVersion: number }) => Buffer
}

const written = (topic: string, payload: Buffer, options: IClientPublishOptions): number =>
  mqttPacket.generate(
    { cmd: "publish", topic, payload, qos: options.qos ?? 0, retain: options.retain ?? false, dup: false, messageId: 1, properties: options.properties },
    { protocolVersion: 5 }
  ).length

const text = fc.string({ unit: "grapheme", maxLength: 40 })

describe("publishPacketBytes", () => {
  it("counts what mqtt-packet writes: topic, packet id, every property, payload, the remaining length's own bytes", () => {
    fc.assert(
      fc.property(
        text.filter((t) => t.length > 0),
        fc.integer({ min: 0, max: 300_000 }),
        fc.constantFrom<0 | 1>(0, 1),
        fc.record(
          {
            contentType: text,
            responseTopic: text,
            correlationData: fc.uint8Array({ maxLength: 16 }).map((b) => Buffer.from(b)),
            messageExpiryInterval: fc.integer({ min: 1, max: 0xffffffff }),
            payloadFormatIndicator: fc.boolean(),
            // mqtt-packet writes no packet at all for user properties that are none (`{}`, `{ a: [] }`).
            userProperties: fc.dictionary(text, fc.oneof(text, fc.array(text, { minLength: 1, maxLength: 3 })), { minKeys: 1, maxKeys: 12 })
          },
          { requiredKeys: [] }
        ),
        (topic, size, qos, properties) => {
          const payload = Buffer.alloc(size, 0x20)
          const options: IClientPublishOptions = { qos, properties }
          expect(publishPacketBytes(topic, payload, options)).toBe(written(topic, payload, options))
        }
      ),
      { numRuns: 300 }
    )
  })

  it("counts a packet without properties, and the remaining length's growth at 128 and 16384", () => {
    for (const size of [0, 120, 121, 122, 16_370, 16_380, 2_097_140, 2_097_160]) {
      const payload = Buffer.alloc(size)
      expect(publishPacketBytes("a/b", payload, { qos: 1 })).toBe(written("a/b", payload, { qos: 1 }))
    }
  })
})
