import { describe, expect, it } from "vitest"
import { judgeCommit } from "@microdcs/execution-log"
import type { ExecutionLogKey } from "@microdcs/store"

/** This island's log keys, as the store parses them (prefix `p`). */
const parseKey = (key: string): ExecutionLogKey | undefined =>
  /^p:dag:log:[^:]+:exec$/.test(key) ? { kind: "exec", executionId: key.split(":")[3]! } : undefined

describe("judging a commit request", () => {
  it("accepts a request whose every key is in the log", () => {
    expect(judgeCommit({ keys: JSON.stringify(["p:dag:log:a:exec", "p:dag:log:b:exec"]) }, parseKey)).toEqual({
      _tag: "Accepted",
      keys: ["p:dag:log:a:exec", "p:dag:log:b:exec"]
    })
  })

  it("refuses the whole request for one foreign key, naming it", () => {
    expect(judgeCommit({ keys: JSON.stringify(["p:dag:log:a:exec", "q:dag:log:a:exec"]) }, parseKey)).toMatchObject({
      _tag: "Refused",
      reason: "foreign-key",
      key: "q:dag:log:a:exec"
    })
  })

  it("refuses a request without a readable key list", () => {
    for (const fields of [{}, { keys: "not json" }, { keys: "[]" }, { keys: `{"a":1}` }, { keys: "[1]" }]) {
      expect(judgeCommit(fields, parseKey)).toMatchObject({ _tag: "Refused", reason: "malformed" })
    }
  })
})
