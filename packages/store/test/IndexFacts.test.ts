import { describe, expect, it } from "vitest"
import { judgeMember, membershipOf, startScore } from "@microdcs/store/testing"

const doc = (extra: object) => JSON.stringify({ ID: "x", ...extra })

describe("startScore", () => {
  it("prefers the start field, then a numeric or ISO StartTime, else unknown", () => {
    expect(startScore("1500", doc({ StartTime: 9 }))).toBe(1500)
    expect(startScore(null, doc({ StartTime: 9 }))).toBe(9)
    expect(startScore("", doc({ StartTime: 4 }))).toBe(4)
    expect(startScore(null, doc({ StartTime: "2024-01-02" }))).toBe(Date.parse("2024-01-02"))
    expect(startScore(null, doc({ StartTime: "2024-01-02T03:04:05.678+02:00" }))).toBe(Date.parse("2024-01-02T03:04:05.678+02:00"))
    for (const text of [doc({ StartTime: "yesterday" }), doc({ StartTime: null }), "[1,2]", "null", "not json"]) {
      expect(startScore(null, text), text).toBeUndefined()
    }
    expect(startScore(null, null)).toBeUndefined()
  })
})

describe("judgeMember", () => {
  const byState = membershipOf("jobResponseByState", "p:jobresponse:bystate:s1:Running", { scope: "s1", state: "Running" })
  const jobOrders = membershipOf("jobOrderList", "p:joborder:list:s1", { scope: "s1" })
  const hash = (fields: Record<string, string | null>, persistent = true) => ({ type: "hash", fields, persistent })

  it("accepts a document that holds every field the index needs", () => {
    expect(judgeMember(byState, "r1", "p:jobresponse:r1", hash({ v: "1", scope: "s1", state: "Running" }))).toBeUndefined()
  })

  it("tells a missing document from one that belongs elsewhere", () => {
    expect(judgeMember(byState, "r1", "p:jobresponse:r1", { type: "none", fields: {}, persistent: true })).toMatchObject({
      kind: "index-entry-without-document", key: byState.key, member: "r1", found: "none"
    })
    expect(judgeMember(byState, "r1", "p:jobresponse:r1", hash({ v: "1", scope: "s1", state: "Held" }))).toMatchObject({
      kind: "stale-member", expected: "scope=s1 state=Running", found: "scope=s1 state=Held"
    })
  })

  it("keeps a retired job order out of its list", () => {
    expect(judgeMember(jobOrders, "j1", "p:joborder:j1", hash({ v: "2", scope: "s1" }, false))).toMatchObject({
      kind: "stale-member", found: "scope=s1 retired"
    })
    expect(judgeMember(jobOrders, "j1", "p:joborder:j1", hash({ v: "2", scope: "s1" }))).toBeUndefined()
  })
})
