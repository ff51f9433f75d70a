import { describe, expect, it } from "vitest"
import { type SfcCasManyJob, scriptKeys, sfcCompareAndSetMany } from "@microdcs/lua-scripts"

const keys = { state: "p:sfc:state:a", work: "p:sfc:work:s", due: "p:sfc:due:s", active: "p:sfc:active:s" }

const full: SfcCasManyJob = {
  keys,
  expectedVersion: 2,
  scope: "s",
  jobId: "a",
  op: "op-a",
  doc: "{}",
  due: 50,
  active: true,
  nudge: true,
  events: ["p:sfc:event:s:src|1", "p:sfc:event:s:src|2"],
  waitsJoin: [{ key: "p:sfc:waits:s:j", since: 10 }],
  waitsMove: [{ key: "p:sfc:waits:s:m", since: 11 }],
  waitsLeave: ["p:sfc:waits:s:l"],
  keyedJoin: [{ key: "p:sfc:keyed:s:t:data.lot:L1", places: "p:sfc:keyplaces:s:t", place: "data.lot", since: 9 }],
  keyedLeave: [{ key: "p:sfc:keyed:s:t:data.lot:L0", places: "p:sfc:keyplaces:s:t", place: "data.lot" }],
  entries: [[["type", "command"], ["id", "x"]]],
  directSend: { pointerKeys: ["p:sfc:correlation:c"], pointerLifetimeMs: 60_000, jobOrderKey: "p:joborder:a" }
}

const bare: SfcCasManyJob = {
  keys: { ...keys, state: "p:sfc:state:b" },
  expectedVersion: 0,
  scope: "s",
  jobId: "b",
  op: "op-b",
  doc: "{}",
  due: null,
  active: false,
  nudge: false,
  events: [],
  waitsJoin: [],
  waitsLeave: [],
  entries: []
}

describe("sfc-cas-many script", () => {
  it("has no fixed keys; each job's block of KEYS follows the header's order", () => {
    expect(sfcCompareAndSetMany.numberOfKeys).toBe(0)
    expect(sfcCompareAndSetMany.name).toBe("sfc-cas-many")
    const args = { nudgeChannel: "p:nudge:sfc", eventLifetimeMs: 3_600_000, jobs: [full, bare] }
    expect(scriptKeys(sfcCompareAndSetMany, {}, args)).toEqual([
      ...Object.values(keys),
      "p:sfc:event:s:src|1",
      "p:sfc:event:s:src|2",
      "p:sfc:waits:s:j",
      "p:sfc:waits:s:m",
      "p:sfc:waits:s:l",
      "p:sfc:keyed:s:t:data.lot:L1",
      "p:sfc:keyplaces:s:t",
      "p:sfc:keyed:s:t:data.lot:L0",
      "p:sfc:keyplaces:s:t",
      "p:sfc:correlation:c",
      "p:joborder:a",
      "p:sfc:state:b",
      keys.work,
      keys.due,
      keys.active
    ])
  })

  it("encodes the shared head, then each job's block with its counts, wait starts, keyed waits and entries (and the held job order version last)", () => {
    expect(sfcCompareAndSetMany.encodeArgs({ nudgeChannel: "p:nudge:sfc", eventLifetimeMs: 1000, jobs: [full, bare] })).toEqual([
      "p:nudge:sfc", 2, 1000,
      2, "s", "a", "op-a", "{}", 50, "1", "1", 2, 1, 1, 1, 1, 60_000, "1", "0", "0", 1, 1, 10, 11, "data.lot", 9, "0", "data.lot", 1, 4, "type", "command", "id", "x", 0,
      0, "s", "b", "op-b", "{}", "", "0", "0", 0, 0, 0, 0, 0, 0, "0", "0", "0", 0, 0, 0
    ])
  })

  it("encodes a job's move and response after its entries, and their keys after its job order key", () => {
    const keys = { doc: "jo", list: "jl", scopes: "sc", changes: "ch", search: "js" }
    const move = { keys, expectedVersion: 2, scope: "s", id: "b", priority: 1, doc: "{}", op: "m-op", change: "Run", origin: "", changesChannel: "nc" }
    const response = {
      keys: { doc: "rd", list: "rl", state: "rs", order: "ro", ofOrder: "rf", scopes: "sc", changes: "ch", failed: "fa", orders: "jl" },
      scope: "s", id: "r", state: "Ended", orderId: "b", startTime: 5, endTime: 6, doc: "{}", op: "r-op", change: "ResultUpdate", changesChannel: "nc"
    }
    const job = { ...bare, jobOrderMove: move, jobResponse: response }
    const args = { nudgeChannel: "", eventLifetimeMs: 1000, jobs: [job] }
    expect(sfcCompareAndSetMany.encodeArgs(args)).toEqual([
      "", 1, 1000,
      0, "s", "b", "op-b", "{}", "", "0", "0", 0, 0, 0, 0, 0, 0, "0", "1", "1", 0, 0, 0,
      2, "s", "b", 1, "{}", "m-op", "Run", "", "nc",
      "s", "r", "Ended", "b", 5, "{}", "r-op", "ResultUpdate", "nc", 6
    ])
    expect(scriptKeys(sfcCompareAndSetMany, {}, args).slice(4)).toEqual(["jo", "jl", "sc", "ch", "js", "rd", "rl", "rs", "ro", "rf", "sc", "ch", "fa", "jl"])
  })

  it("decodes one reply per job, the duplicate with its event index", () => {
    expect(
      sfcCompareAndSetMany.decodeReply([
        ["ok", 3, "1-0", "joborder", 0, null],
        ["ok", 2, "2-0", "moved", 4, "responded", 0, "joborder", 4, "{}"],
        ["ok", 1],
        ["conflict", 4],
        ["scope", "home"],
        ["duplicate", 1, "holder"],
        ["wrongtype", "k", "string", "zset"]
      ])
    ).toEqual([
      { status: "ok", version: 3, entryIds: ["1-0"], jobOrder: null },
      { status: "ok", version: 2, entryIds: ["2-0"], jobOrderVersion: 4, responseVersion: 0, jobOrder: { version: 4, doc: "{}" } },
      { status: "ok", version: 1, entryIds: [] },
      { status: "conflict", actual: 4 },
      { status: "scope", storedScope: "home" },
      { status: "duplicate", eventIndex: 1, jobId: "holder" },
      { status: "wrongtype", key: "k", actual: "string", expected: "zset" }
    ])
    expect(sfcCompareAndSetMany.decodeReply([])).toEqual([])
    expect(() => sfcCompareAndSetMany.decodeReply("OK")).toThrow(/unexpected reply/)
    expect(() => sfcCompareAndSetMany.decodeReply([["notfound"]])).toThrow(/unexpected reply/)
  })
})
