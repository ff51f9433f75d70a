import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import fc from "fast-check"
import { type CloudEvent, decode, encode, makeCloudEvent } from "@microdcs/cloudevents-mqtt"

const full = (datacontenttype: string, data: unknown): CloudEvent =>
  makeCloudEvent({
    source: "urn:mes:station-1",
    type: "org.opcfoundation.ISA95-JOBCONTROL_V2.Store.v2",
    subject: "line-1/jo-1",
    time: "2025-01-02T03:04:05.678Z",
    datacontenttype,
    dataschema: "https://example.com/joborder.json",
    data,
    correlationid: "0f8fad5b-d9cb-469f-a165-70867728950e",
    causationid: "previous-event-1",
    extensions: { method: "PUT", traceparent: "00-abc-def-01" }
  })

const roundTrip = (event: CloudEvent) => {
  const encoded = Result.getOrThrow(encode(event))
  return { encoded, decoded: decode("t/commands", encoded.payload, encoded.properties) }
}

describe("binary mode round trip", () => {
  it("keeps every attribute kind with JSON data", () => {
    const event = full("application/json", { JobOrderID: "jo-1", Priority: 5, Nested: [1, "two", null, { x: true }] })
    const { encoded, decoded } = roundTrip(event)
    expect(encoded.properties.contentType).toBe("application/json")
    expect(encoded.properties.correlationData).toEqual(Buffer.from("0f8fad5bd9cb469fa16570867728950e", "hex"))
    expect(encoded.properties.userProperties).not.toHaveProperty("correlationid")
    expect(encoded.properties.userProperties).not.toHaveProperty("datacontenttype")
    expect(encoded.properties.userProperties).toMatchObject({ specversion: "1.0", id: event.id, method: "PUT", causationid: "previous-event-1" })
    expect(JSON.parse(encoded.payload.toString())).toEqual(event.data)
    expect(decoded).toEqual(Result.succeed(event))
  })

  it("keeps every attribute kind with MessagePack data, binary data included", () => {
    const event = full("application/msgpack", { JobOrderID: "jo-1", blob: new Uint8Array([0, 1, 255]), big: 2 ** 40, neg: -3.5 })
    const { encoded, decoded } = roundTrip(event)
    expect(encoded.properties.contentType).toBe("application/msgpack")
    expect(encoded.payload[0]! & 0xf0).toBe(0x80) // a fixmap: MessagePack, not JSON text
    expect(decoded).toEqual(Result.succeed(event))
  })

  it("sends an event without data as an empty payload", () => {
    const event = makeCloudEvent({ source: "s", type: "t" })
    const { encoded, decoded } = roundTrip(event)
    expect(encoded.payload.length).toBe(0)
    expect(encoded.properties.contentType).toBeUndefined()
    expect(decoded).toEqual(Result.succeed(event))
  })

  it("round-trips generated events", () => {
    const name = fc.stringMatching(/^[a-z][a-z0-9]{0,9}$/).filter((n) => !["specversion", "id", "source", "type", "subject", "time", "dataschema", "datacontenttype", "data", "correlationid"].includes(n))
    const text = fc.string({ minLength: 1 }).filter((s) => !s.includes("\u0000"))
    const event = fc.record({
      id: text,
      source: text,
      type: text,
      subject: fc.option(text, { nil: undefined }),
      correlationid: fc.option(fc.uuid(), { nil: undefined }),
      extensions: fc.dictionary(name, fc.string().filter((s) => !s.includes("\u0000")), { maxKeys: 5 }),
      datacontenttype: fc.constantFrom("application/json", "application/msgpack"),
      // The MessagePack decoder refuses `__proto__` keys (prototype pollution), by design.
      data: fc.option(fc.jsonValue().filter((v) => !JSON.stringify(v).includes('"__proto__"')), { nil: undefined })
    })
    fc.assert(
      fc.property(event, (input) => {
        const e = makeCloudEvent(input)
        const decoded = Result.getOrThrow(roundTrip(e).decoded)
        // JSON has no -0: compare through JSON for the data, exactly for everything else.
        expect({ ...decoded, data: JSON.stringify(decoded.data) }).toEqual({ ...e, data: JSON.stringify(e.data) })
      })
    )
  })
})

describe("decode errors", () => {
  const good = Result.getOrThrow(encode(full("application/json", { a: 1 })))
  const kind = (payload: Uint8Array, properties: Record<string, unknown>, maxPayloadBytes?: number) => {
    const result = decode("t", payload, properties, { maxPayloadBytes })
    return Result.isFailure(result) ? result.failure.kind : "ok"
  }

  it("too-large: a payload over the limit (default 256 KiB)", () => {
    expect(kind(good.payload, good.properties, 4)).toBe("too-large")
    expect(kind(Buffer.alloc(256 * 1024 + 1, 0x20), good.properties)).toBe("too-large")
    expect(kind(Buffer.from(" 1 ".padEnd(256 * 1024)), good.properties)).toBe("ok")
  })

  it("content-type: unknown types and structured mode", () => {
    expect(kind(good.payload, { ...good.properties, contentType: "text/plain" })).toBe("content-type")
    expect(kind(good.payload, { ...good.properties, contentType: "application/cloudevents+json" })).toBe("content-type")
    expect(kind(good.payload, { ...good.properties, contentType: 42 })).toBe("content-type")
    expect(kind(good.payload, { ...good.properties, contentType: "application/json; charset=utf-8" })).toBe("ok")
    expect(kind(good.payload, { ...good.properties, contentType: "application/vnd.joborder+json" })).toBe("ok")
  })

  it("payload: bytes that do not parse as the content type says", () => {
    expect(kind(Buffer.from("{not json"), good.properties)).toBe("payload")
    expect(kind(Buffer.from([0xff, 0xfe]), good.properties)).toBe("payload") // not UTF-8
    expect(kind(Buffer.from([0x81, 0xc0, 0x01]), { ...good.properties, contentType: "application/msgpack" })).toBe("payload")
    expect(kind(Buffer.from([0x01, 0x02]), { ...good.properties, contentType: "application/msgpack" })).toBe("payload") // extra bytes
    expect(kind("text" as unknown as Uint8Array, good.properties)).toBe("payload")
  })

  it("correlation: correlation data that is not exactly 16 bytes, or disagrees", () => {
    expect(kind(good.payload, { ...good.properties, correlationData: Buffer.alloc(15) })).toBe("correlation")
    expect(kind(good.payload, { ...good.properties, correlationData: Buffer.alloc(17) })).toBe("correlation")
    expect(kind(good.payload, { ...good.properties, correlationData: "0123456789abcdef" })).toBe("correlation")
    const { correlationData: _, ...withoutData } = good.properties
    const props = (correlationid: string) => ({ ...withoutData, userProperties: { ...good.properties.userProperties, correlationid } })
    expect(kind(good.payload, props("not-a-uuid"))).toBe("correlation")
    expect(kind(good.payload, props("0F8FAD5B-D9CB-469F-A165-70867728950E"))).toBe("ok")
    expect(kind(good.payload, { ...props("11111111-2222-3333-4444-555555555555"), correlationData: good.properties.correlationData })).toBe("correlation")
  })

  it("attributes: a required attribute missing, a bad specversion or time, a repeated attribute", () => {
    const without = (name: string) => {
      const userProperties = { ...good.properties.userProperties }
      delete userProperties[name]
      return { ...good.properties, userProperties }
    }
    for (const name of ["id", "source", "type", "specversion"]) expect(kind(good.payload, without(name))).toBe("attributes")
    const withProp = (name: string, value: unknown) => ({ ...good.properties, userProperties: { ...good.properties.userProperties, [name]: value } })
    expect(kind(good.payload, withProp("specversion", "0.3"))).toBe("attributes")
    expect(kind(good.payload, withProp("time", "yesterday"))).toBe("attributes")
    expect(kind(good.payload, withProp("id", ""))).toBe("attributes")
    expect(kind(good.payload, withProp("method", ["PUT", "DELETE"]))).toBe("attributes")
    expect(kind(good.payload, { ...good.properties, userProperties: "x" })).toBe("attributes")
    expect(kind(good.payload, {})).toBe("attributes")
    expect(kind(good.payload, withProp("X-Other-Metadata", "ignored"))).toBe("ok")
  })

  it("never throws, whatever the payload and properties", () => {
    const userProperties = fc.dictionary(
      fc.oneof(fc.constantFrom("id", "source", "type", "specversion", "time", "correlationid", "datacontenttype", "__proto__", "constructor"), fc.string()),
      fc.oneof(fc.string(), fc.array(fc.string(), { maxLength: 3 }), fc.integer(), fc.constant(null))
    )
    const properties = fc.option(
      fc.record(
        {
          userProperties: fc.oneof(userProperties, fc.anything()),
          contentType: fc.oneof(fc.constantFrom("application/json", "application/msgpack", "application/cloudevents+json"), fc.anything()),
          correlationData: fc.oneof(fc.uint8Array({ minLength: 14, maxLength: 18 }), fc.anything()),
          responseTopic: fc.anything()
        },
        { requiredKeys: [] }
      ),
      { nil: undefined }
    )
    const payload = fc.oneof(fc.uint8Array({ maxLength: 256 }), fc.anything(), fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v) ?? "")))
    fc.assert(
      fc.property(payload, properties, fc.option(fc.nat(300), { nil: undefined }), (bytes, props, maxPayloadBytes) => {
        const result = decode("t", bytes as Uint8Array, props as never, { maxPayloadBytes })
        expect(Result.isResult(result)).toBe(true)
      }),
      { numRuns: 2000 }
    )
  })
})

describe("encode errors", () => {
  const base = makeCloudEvent({ source: "s", type: "t", data: { a: 1 } })
  const kind = (event: CloudEvent, maxPayloadBytes?: number) => {
    const result = encode(event, { maxPayloadBytes })
    return Result.isFailure(result) ? result.failure.kind : "ok"
  }

  it("refuses what could not travel or would not decode", () => {
    expect(kind({ ...base, id: "" })).toBe("attributes")
    expect(kind({ ...base, time: "now" })).toBe("attributes")
    expect(kind({ ...base, subject: "a\u0000b" })).toBe("attributes")
    expect(kind({ ...base, extensions: { "Bad-Name": "x" } })).toBe("attributes")
    expect(kind({ ...base, extensions: { subject: "x" } })).toBe("attributes")
    expect(kind({ ...base, extensions: { correlationid: "nope" } })).toBe("correlation")
    expect(kind({ ...base, datacontenttype: "text/plain" })).toBe("content-type")
    expect(kind({ ...base, data: { n: 1n } })).toBe("payload")
    const cycle: Record<string, unknown> = {}
    cycle["self"] = cycle
    expect(kind({ ...base, data: cycle })).toBe("payload")
    expect(kind({ ...base, data: "x".repeat(100) }, 50)).toBe("too-large")
    expect(kind(base)).toBe("ok")
  })
})
