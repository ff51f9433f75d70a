import { describe, expect, it } from "vitest"
import { type KeySchema, makeKeySchema } from "@microdcs/keyschema"

const schema = makeKeySchema("microdcs") as KeySchema

describe("trigger keys", () => {
  it("keeps every trigger in one hash and nudges on nudge:triggers", () => {
    expect(schema.key("triggers", {})).toBe("microdcs:dag:triggers")
    expect(schema.key("nudge", { kind: "triggers" })).toBe("microdcs:nudge:triggers")
  })

  it("parses the trigger hash back and tells it apart from the execution log", () => {
    expect(schema.parse("microdcs:dag:triggers")).toEqual({ family: "triggers", parts: {} })
    expect(schema.parse("microdcs:dag:triggers:x")).toBeUndefined()
    expect(schema.parse("microdcs:dag:log:triggers:exec")).toEqual({ family: "executionLogExec", parts: { executionId: "triggers" } })
  })

  it("claims one edit's announcement under its own key", () => {
    expect(schema.key("triggerAnnouncement", { edit: "8d3c" })).toBe("microdcs:dag:triggers:announced:8d3c")
    expect(schema.parse("microdcs:dag:triggers:announced:8d3c")).toEqual({ family: "triggerAnnouncement", parts: { edit: "8d3c" } })
  })
})
