import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import fc from "fast-check"
import { encode, isMqttString, makeCloudEvent, makeErrorReply, mqttStringProblem, toMqttString, validateResponseTopic, validateTopicName } from "@microdcs/cloudevents-mqtt"

describe("MQTT strings", () => {
  it("refuses what mosquitto refuses: NUL, control characters, noncharacters, lone surrogates, over 65535 bytes", () => {
    for (const bad of ["a\u0000b", "jo-\tx", "a\nb", "\u001f", "\u007f", "\u0085", "\u009f", "\ufdd0", "\ufdef", "\ufffe", "\uffff", "\u{1fffe}", "\u{10ffff}", "\ud800", "x\udc00"]) {
      expect(mqttStringProblem(bad), JSON.stringify(bad)).toBeDefined()
    }
    expect(mqttStringProblem("jo-\tx")).toBe("contains the control character U+0009")
    expect(mqttStringProblem("x".repeat(65536))).toBe("is longer than 65535 bytes")
    for (const good of ["", "jo-1", "Größe ü", "\u00a0", "\ufffd", "\ufdcf", "\ufdf0", "😀", "\u{1fffd}", "x".repeat(65535), "€".repeat(21845)]) {
      expect(mqttStringProblem(good), JSON.stringify(good.slice(0, 10))).toBeUndefined()
    }
  })

  it("toMqttString escapes control characters, replaces what has no meaning, and bounds the length", () => {
    expect(toMqttString("unknown job order jo-\tx")).toBe("unknown job order jo-\\u0009x")
    expect(toMqttString("a\u0000b\u007fc")).toBe("a\\u0000b\\u007fc")
    expect(toMqttString("a\ud800b\ufffe")).toBe("a\ufffdb\ufffd")
    expect(toMqttString("x".repeat(5000))).toHaveLength(1000)
    expect(toMqttString("abc", 2)).toBe("ab")
    expect(toMqttString("ok 😀")).toBe("ok 😀")
    // Cutting a surrogate pair in half leaves no lone surrogate.
    expect(isMqttString(toMqttString("a😀", 2))).toBe(true)
  })

  it("toMqttString always gives a sendable string, whatever the input", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 300 }), fc.integer({ min: 1, max: 400 }), (text, max) => {
        const safe = toMqttString(text, max)
        expect(mqttStringProblem(safe)).toBeUndefined()
        expect(safe.length).toBeLessThanOrEqual(max)
        if (isMqttString(text) && text.length <= max) expect(safe).toBe(text)
      }),
      { numRuns: 2000, seed: 21 }
    )
  })

  it("an error reply quoting hostile input encodes to properties the broker accepts", () => {
    const reply = makeErrorReply({ source: "urn:island", type: "error.v1", kind: "Unknown\u0001Kind", message: "job order jo-\tx\u0000\ud800 not found" })
    const encoded = Result.getOrThrow(encode(reply))
    for (const value of Object.values(encoded.properties.userProperties ?? {})) {
      for (const text of [value].flat()) expect(mqttStringProblem(text)).toBeUndefined()
    }
    expect(encoded.properties.userProperties?.["mdcserrormessage"]).toBe("job order jo-\\u0009x\\u0000\ufffd not found")
  })

  it("encode refuses a control character in any attribute, so nothing the broker refuses is sent", () => {
    const base = makeCloudEvent({ source: "s", type: "t" })
    for (const event of [
      { ...base, subject: "line\t1" },
      { ...base, id: "id\u007f" },
      { ...base, extensions: { jobid: "jo-\tx" } },
      { ...base, datacontenttype: "application/json\n" }
    ]) {
      const result = encode(event)
      expect(Result.isFailure(result) && result.failure.kind).toBe("attributes")
    }
  })

  it("topics and response topics with control characters, and response topics of the broker, are refused", () => {
    expect(Result.isFailure(validateTopicName("a/\tb"))).toBe(true)
    expect(Result.isFailure(validateTopicName("a/\u0085"))).toBe(true)
    expect(Result.isSuccess(validateTopicName("$SYS/x"))).toBe(true) // a topic name; the broker decides
    for (const bad of ["$SYS/x", "$share/g/x", "a/+", "a/#", "", "a\u0000", "a/\tb"]) {
      const result = validateResponseTopic(bad)
      expect(Result.isFailure(result) && result.failure.part, JSON.stringify(bad)).toBe("responseTopic")
    }
    expect(Result.isSuccess(validateResponseTopic("mes/replies/1"))).toBe(true)
  })
})
