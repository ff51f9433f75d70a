import { runInNewContext } from "node:vm"
import { setFlagsFromString } from "node:v8"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import fc from "fast-check"
import { CONFIG_KINDS, configEventType, decode, encode, type IncomingMessage, makeCloudEvent, mqttStringProblem, prepareReply, type PublishProperties } from "@microdcs/cloudevents-mqtt"
import { parseRequest } from "@microdcs/job-control"
import { MethodEventTypes, QueryEventTypes } from "@microdcs/job-state"
import { badInputReply, toJobControlRequest } from "@microdcs/island-mqtt"

/**
 * 10,000 hostile requests through the ingress's decoding path, without a broker: decode, parse,
 * and the reply the ingress would send. Every input must end in a valid request or a refusal
 * whose reply the broker would accept, nothing may throw, and memory must not pile up.
 */

const SOURCE = "urn:microdcs:island:fuzz"
const LIMIT = 256 * 1024

// A forced GC makes heap figures comparable; V8 lets a running process switch it on.
setFlagsFromString("--expose-gc")
const gc = runInNewContext("gc") as () => void

const hostile = fc.string({ unit: "binary", maxLength: 40 })
const anyText = fc.oneof(fc.string({ maxLength: 40 }), hostile, fc.constantFrom("jo-\tx", "a\u0000b", "\ud800", "\ufffe", "x\u0085y", ""))
const types = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...Object.values(MethodEventTypes), ...Object.values(QueryEventTypes), ...CONFIG_KINDS.map(configEventType)) },
  { weight: 1, arbitrary: anyText }
)

/** Deep nesting, closed or not, far beyond any real document. */
const deepJson = fc.record({ depth: fc.integer({ min: 1, max: 100_000 }), open: fc.constantFrom("[", '{"a":'), closed: fc.boolean() }).map(({ depth, open, closed }) =>
  Buffer.from(open.repeat(depth) + (closed ? "1" + (open === "[" ? "]" : "}").repeat(depth) : ""))
)
const deepMsgpack = fc.record({ depth: fc.integer({ min: 1, max: 100_000 }), head: fc.constantFrom(0x91, 0x81) }).map(({ depth, head }) => {
  const bytes = new Uint8Array(head === 0x81 ? depth * 2 + 1 : depth + 1).fill(head)
  if (head === 0x81) for (let i = 1; i < bytes.length; i += 2) bytes[i] = 0xa0 // fixmap of one: "" → next level
  bytes[bytes.length - 1] = 0xc0
  return Buffer.from(bytes)
})

/** Requests of the right shape with hostile ids, and huge fields that are still within the limit. */
const shaped = fc.record({ id: anyText, huge: fc.option(fc.integer({ min: 1, max: LIMIT - 200 }), { freq: 8, nil: undefined }), msgpack: fc.boolean() }).map(({ id, huge, msgpack }) => {
  const data = { JobOrderID: id, JobOrder: { JobOrderID: id, Priority: 1, ...(huge !== undefined ? { Description: "x".repeat(huge) } : {}) } }
  const packed = msgpack ? encode(makeCloudEvent({ source: "s", type: "t", datacontenttype: "application/msgpack", data }), { maxPayloadBytes: 2 * LIMIT }) : undefined
  return packed !== undefined && Result.isSuccess(packed) ? packed.success.payload : Buffer.from(JSON.stringify(data))
})

const payloads = fc.oneof(
  { weight: 3, arbitrary: shaped },
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 2048 }).map((bytes) => Buffer.from(bytes)) },
  { weight: 2, arbitrary: deepJson },
  { weight: 1, arbitrary: deepMsgpack },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => Buffer.from(JSON.stringify(v) ?? "").subarray(0, 300)) },
  { weight: 1, arbitrary: fc.integer({ min: LIMIT + 1, max: 2 * 1024 * 1024 }).map((size) => Buffer.alloc(size, 0x5b)) },
  { weight: 1, arbitrary: fc.constant(Buffer.alloc(0)) }
)

const properties = fc.record(
  {
    contentType: fc.oneof(fc.constantFrom("application/json", "application/msgpack", "text/plain", "application/cloudevents+json"), anyText),
    correlationData: fc.oneof(fc.uint8Array({ minLength: 16, maxLength: 16 }), fc.uint8Array({ maxLength: 20 })).map((bytes) => Buffer.from(bytes)),
    responseTopic: fc.constant("mes/replies/fuzz"),
    userProperties: fc.record(
      {
        specversion: fc.constantFrom("1.0", "1.0", "0.3"),
        id: anyText,
        source: fc.oneof(fc.constant("urn:mes"), anyText),
        type: types,
        subject: fc.oneof(fc.constant("line-1"), anyText),
        time: fc.constantFrom("2025-01-02T03:04:05Z", "yesterday"),
        extra: anyText
      },
      { requiredKeys: ["specversion", "id", "source", "type"] }
    )
  },
  { requiredKeys: ["userProperties"] }
)

/** The reply the ingress sends for a refusal, encoded as `MqttConnection.reply` does: it must be sendable. */
const expectSendableReply = (message: IncomingMessage, reply: ReturnType<typeof badInputReply>) => {
  const prepared = prepareReply(message, reply)
  const encoded = encode(prepared.event, { correlationData: prepared.correlationData })
  if (Result.isFailure(encoded)) throw new Error(`the reply does not encode: ${encoded.failure.message}`)
  const { properties } = encoded.success
  const strings = [properties.contentType ?? "", ...Object.values(properties.userProperties ?? {}).flat()]
  for (const text of strings) expect(mqttStringProblem(text)).toBeUndefined()
}

const handleOne = (payload: Buffer, props: PublishProperties) => {
  const decoded = decode("p/line-1/commands", payload, props)
  const message: IncomingMessage = {
    topic: "p/line-1/commands",
    decoded,
    responseTopic: "mes/replies/fuzz",
    ...(props.correlationData ? { correlationData: Buffer.from(props.correlationData) } : {}),
    payload,
    properties: props,
    qos: 1,
    retain: false,
    dup: false,
    ack: Effect.void
  }
  if (Result.isFailure(decoded)) return expectSendableReply(message, badInputReply(SOURCE, decoded.failure.kind, decoded.failure.message))
  const event = decoded.success
  // What is accepted is stored as JSON text: it must survive JSON.stringify (a deep value would not).
  expect(() => JSON.stringify(event.data ?? null)).not.toThrow()
  const parsed = parseRequest(toJobControlRequest(event))
  if (parsed !== undefined && Result.isFailure(parsed.command)) {
    expectSendableReply(message, badInputReply(SOURCE, parsed.command.failure.kind, parsed.command.failure.message, event))
  }
}

describe("request decoding under a malformed flood", () => {
  it("10,000 hostile inputs: each a valid request or a sendable refusal, nothing thrown, memory bounded", { timeout: 120_000 }, () => {
    gc()
    const before = process.memoryUsage()
    let peakRss = before.rss
    let runs = 0
    fc.assert(
      fc.property(payloads, properties, (payload, props) => {
        handleOne(payload, props satisfies PublishProperties)
        if (++runs % 500 === 0) peakRss = Math.max(peakRss, process.memoryUsage().rss)
      }),
      { numRuns: 10_000, seed: 2222, endOnFailure: true }
    )
    gc()
    const after = process.memoryUsage()
    const MiB = 1024 * 1024
    // Nothing is kept between inputs: the heap after a GC is about where it was.
    expect((after.heapUsed - before.heapUsed) / MiB).toBeLessThan(32)
    // The flood took RSS from 130 MB to 1.8 GB; a few inputs of 2 MiB at a time need far less.
    expect((peakRss - before.rss) / MiB).toBeLessThan(400)
  })
})
