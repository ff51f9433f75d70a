import { describe, expect, it } from "vitest"
import { dedupeHash } from "@microdcs/keyschema"

describe("dedupe hash", () => {
  it("matches the published test vector", () => {
    // printf "17:urn:mes:station-7:evt-0001" | sha256sum | cut -c1-32
    expect(dedupeHash("urn:mes:station-7", "evt-0001")).toBe("2a0220a07cabfca8ad56c57d38c7e635")
  })

  it("is 32 lower-case hex chars", () => {
    expect(dedupeHash("a", "b")).toMatch(/^[0-9a-f]{32}$/)
  })

  it("does not collide when the split between source and id moves", () => {
    expect(dedupeHash("a:b", "c")).not.toBe(dedupeHash("a", "b:c"))
  })

  it("counts the source length in UTF-8 bytes", () => {
    expect(dedupeHash("é", "x")).not.toBe(dedupeHash("e", "x"))
  })
})
