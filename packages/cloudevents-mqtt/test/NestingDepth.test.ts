import { describe, expect, it } from "@effect/vitest"
import { encode as encodeMsgpack } from "@msgpack/msgpack"
import { Result } from "effect"
import fc from "fast-check"
import { decode, encode, makeCloudEvent } from "@microdcs/cloudevents-mqtt"

const properties = (contentType: string) =>
  Result.getOrThrow(encode(makeCloudEvent({ source: "urn:mes", type: "t", datacontenttype: contentType, data: 1 }))).properties

const decodeAs = (contentType: string, payload: Uint8Array, maxNestingDepth?: number) =>
  decode("t/commands", payload, properties(contentType), { maxNestingDepth })

const nested = (depth: number): unknown => {
  let value: unknown = []
  for (let i = 1; i < depth; i++) value = i % 2 === 0 ? [value] : { a: value }
  return value
}

/** 0x91 (an array of one) `depth - 1` times, then an empty array: built without recursion. */
const deepMsgpack = (depth: number) => {
  const bytes = new Uint8Array(depth).fill(0x91)
  bytes[depth - 1] = 0x90
  return bytes
}

describe("nesting depth", () => {
  it("refuses deep JSON before parsing it, with a payload error that says why", () => {
    const deep = Buffer.from("[".repeat(100_000) + "]".repeat(100_000))
    const result = decodeAs("application/json", deep)
    expect(Result.isFailure(result) && result.failure.kind).toBe("payload")
    expect(Result.isFailure(result) && result.failure.message).toContain("nests deeper than 64 levels")
    // Unclosed is refused just the same, and so is an object chain.
    expect(Result.isFailure(decodeAs("application/json", Buffer.from('{"a":'.repeat(1000))))).toBe(true)
  })

  it("refuses deep MessagePack before decoding it", () => {
    const result = decodeAs("application/msgpack", deepMsgpack(100_000))
    expect(Result.isFailure(result) && result.failure.message).toContain("nests deeper than 64 levels")
    const maps = Buffer.from(encodeMsgpack(nested(65)))
    expect(Result.isFailure(decodeAs("application/msgpack", maps))).toBe(true)
  })

  it("accepts nesting up to the limit, and brackets inside strings do not count", () => {
    expect(Result.isSuccess(decodeAs("application/json", Buffer.from(JSON.stringify(nested(64)))))).toBe(true)
    expect(Result.isFailure(decodeAs("application/json", Buffer.from(JSON.stringify(nested(65)))))).toBe(true)
    expect(Result.isSuccess(decodeAs("application/msgpack", Buffer.from(encodeMsgpack(nested(64)))))).toBe(true)
    expect(Result.isSuccess(decodeAs("application/json", Buffer.from(JSON.stringify({ s: "[[[[\\\"{{{{".repeat(100) }))))).toBe(true)
    expect(Result.isSuccess(decodeAs("application/json", Buffer.from(JSON.stringify(nested(10))), 10))).toBe(true)
    expect(Result.isFailure(decodeAs("application/json", Buffer.from(JSON.stringify(nested(11))), 10))).toBe(true)
  })

  it("the scan agrees with the parsed depth for generated JSON and MessagePack", () => {
    const depthOf = (value: unknown): number =>
      typeof value === "object" && value !== null ? 1 + Math.max(0, ...Object.values(value).map(depthOf)) : 0
    fc.assert(
      fc.property(fc.jsonValue({ depthSize: "large", maxDepth: 12 }), fc.integer({ min: 1, max: 12 }), (value, max) => {
        const expected = depthOf(value) <= max
        expect(Result.isSuccess(decodeAs("application/json", Buffer.from(JSON.stringify(value)), max))).toBe(expected)
        if (!JSON.stringify(value).includes('"__proto__"')) {
          expect(Result.isSuccess(decodeAs("application/msgpack", Buffer.from(encodeMsgpack(value)), max))).toBe(expected)
        }
      }),
      { numRuns: 1000, seed: 22 }
    )
  })

  it("a MessagePack length that claims more than the payload holds is refused", () => {
    // array32 claiming 2^32 - 1 items, map32 claiming as many pairs, str32 claiming 4 GiB.
    for (const bytes of [[0xdd, 0xff, 0xff, 0xff, 0xff, 0x01], [0xdf, 0xff, 0xff, 0xff, 0xff, 0x01], [0xdb, 0xff, 0xff, 0xff, 0xff, 0x61]]) {
      const result = decodeAs("application/msgpack", Uint8Array.from(bytes))
      expect(Result.isFailure(result) && result.failure.kind).toBe("payload")
    }
  })
})
