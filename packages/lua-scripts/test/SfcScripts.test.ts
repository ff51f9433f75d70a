import { describe, expect, it } from "vitest"
import { defineScript, scriptKeys, sfcCompareAndSet, sfcDelete } from "@microdcs/lua-scripts"

const args = {
  expectedVersion: 2,
  scope: "s",
  jobId: "j",
  op: "op-1",
  doc: "{}",
  due: null,
  active: true,
  nudgeChannel: "p:nudge:sfc",
  event: { key: "p:sfc:event:s:src|1", lifetimeMs: 3_600_000 },
  waitsJoin: [{ key: "p:sfc:waits:s:a", since: 10 }, { key: "p:sfc:waits:s:b", since: 11 }],
  waitsMove: [{ key: "p:sfc:waits:s:d", since: 12 }],
  waitsLeave: ["p:sfc:waits:s:c"],
  entries: [[["type", "command"], ["id", "x"]], [["type", "start"]]] as const
}

describe("sfc scripts", () => {
  it("declare 4 and 3 fixed keys followed by a tail derived from the arguments", () => {
    expect(sfcCompareAndSet.numberOfKeys).toBe(4)
    expect(sfcCompareAndSet.name).toBe("sfc-cas")
    const keys = scriptKeys(sfcCompareAndSet, { state: "st", work: "wk", due: "du", active: "ac" }, args)
    expect(keys).toEqual(["st", "wk", "du", "ac", args.event.key, "p:sfc:waits:s:a", "p:sfc:waits:s:b", "p:sfc:waits:s:d", "p:sfc:waits:s:c"])
    expect(scriptKeys(sfcDelete, { state: "st", due: "du", active: "ac" }, { expectedVersion: -1, scope: "s", jobId: "j", waits: ["w"] })).toEqual(
      ["st", "du", "ac", "w"]
    )
    const keyed = [{ key: "p:sfc:keyed:s:t:attribute.lot:L1", places: "p:sfc:keyplaces:s:t", place: "attribute.lot" }]
    expect(scriptKeys(sfcDelete, { state: "st", due: "du", active: "ac" }, { expectedVersion: -1, scope: "s", jobId: "j", waits: ["w"], keyed })).toEqual(
      ["st", "du", "ac", "w", keyed[0]!.key, keyed[0]!.places]
    )
    expect(sfcDelete.encodeArgs({ expectedVersion: -1, scope: "s", jobId: "j", waits: ["w"], keyed })).toEqual([-1, "s", "j", 1, "attribute.lot"])
  })

  it("encode the counts and flat field/value entries the script header describes", () => {
    expect(sfcCompareAndSet.encodeArgs(args)).toEqual([
      2, "s", "j", "op-1", "{}", "", "1", "p:nudge:sfc", "1", 2, 1, 1, 3_600_000, 0, 0,
      10, 11, 12,
      2, 4, "type", "command", "id", "x", 2, "type", "start"
    ])
    // Keyed waits: their counts in the head, their places (and starts) after the moved starts, two keys each after the left waits sets.
    const keyedJoin = [
      { key: "p:sfc:keyed:s:t:data.lot:L1", places: "p:sfc:keyplaces:s:t", place: "data.lot", since: 9 },
      { key: "p:sfc:keyed:s:t:data.lot:L2", places: "p:sfc:keyplaces:s:t", place: "data.lot", since: 8, move: true }
    ]
    const keyedLeave = [{ key: "p:sfc:keyed:s:t:data.lot:L0", places: "p:sfc:keyplaces:s:t", place: "data.lot" }]
    expect(sfcCompareAndSet.encodeArgs({ ...args, keyedJoin, keyedLeave }).slice(13, 25)).toEqual([2, 1, 10, 11, 12, "data.lot", 9, "0", "data.lot", 8, "1", "data.lot"])
    expect(scriptKeys(sfcCompareAndSet, { state: "st", work: "wk", due: "du", active: "ac" }, { ...args, keyedJoin, keyedLeave }).slice(9)).toEqual([
      keyedJoin[0]!.key, keyedJoin[0]!.places, keyedJoin[1]!.key, keyedJoin[1]!.places, keyedLeave[0]!.key, keyedLeave[0]!.places
    ])
  })

  it("decode every reply", () => {
    expect(sfcCompareAndSet.decodeReply(["ok", 3, "1-0", "1-1"])).toEqual({ status: "ok", version: 3, entryIds: ["1-0", "1-1"] })
    expect(sfcCompareAndSet.decodeReply(["duplicate", "job"])).toEqual({ status: "duplicate", jobId: "job" })
    expect(sfcCompareAndSet.decodeReply(["conflict", 4])).toEqual({ status: "conflict", actual: 4 })
    expect(() => sfcCompareAndSet.decodeReply(["notfound"])).toThrow(/unexpected reply/)
  })

  it("append the direct-send trailer only when it is given: pointer keys and the job order key last", () => {
    const direct = { ...args, directSend: { pointerKeys: ["p:sfc:correlation:c1"], pointerLifetimeMs: 60_000, jobOrderKey: "p:joborder:j" } }
    expect(scriptKeys(sfcCompareAndSet, { state: "st", work: "wk", due: "du", active: "ac" }, direct).slice(-2)).toEqual([
      "p:sfc:correlation:c1",
      "p:joborder:j"
    ])
    // With the job order key, the held version follows (0 = none held).
    expect(sfcCompareAndSet.encodeArgs(direct).slice(-4)).toEqual([1, 60_000, "1", 0])
    expect(sfcCompareAndSet.encodeArgs({ ...direct, directSend: { ...direct.directSend, heldJobOrderVersion: 7 } }).slice(-4)).toEqual([1, 60_000, "1", 7])
    expect(sfcCompareAndSet.encodeArgs({ ...direct, directSend: { ...direct.directSend, jobOrderKey: null } }).slice(-3)).toEqual([1, 60_000, "0"])
    expect(sfcCompareAndSet.decodeReply(["ok", 3, "1-0", "joborder", 2, "{}"])).toEqual({ status: "ok", version: 3, entryIds: ["1-0"], jobOrder: { version: 2, doc: "{}" } })
    expect(sfcCompareAndSet.decodeReply(["ok", 3, "joborder", 0, null])).toEqual({ status: "ok", version: 3, entryIds: [], jobOrder: null })
    // The held version: the document is left out.
    expect(sfcCompareAndSet.decodeReply(["ok", 3, "joborder", 7, null])).toEqual({ status: "ok", version: 3, entryIds: [], jobOrder: { version: 7, doc: undefined } })
  })

  it("a tail needs both the +.lua name and a tailKeys function", () => {
    expect(() =>
      defineScript({ file: "test/echo-1.lua", keys: ["a"], tailKeys: () => [], encodeArgs: () => [], decodeReply: (r) => r })
    ).toThrow(/both or neither/)
    expect(() => defineScript({ file: "sfc-cas-4+.lua", keys: ["a", "b", "c", "d"], encodeArgs: () => [], decodeReply: (r) => r })).toThrow(
      /both or neither/
    )
  })
})
