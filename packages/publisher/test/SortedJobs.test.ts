import { runInNewContext } from "node:vm"
import { setFlagsFromString } from "node:v8"
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { compareUtf8, SortedJobs } from "../src/SortedJobs.js"

const row = (id: string) => ({ priority: 1, row: { job_order_id: id, state: "AllowedToStart_Ready", has_result: false } })

/** A full collection, so what is still reachable is all that is measured. */
const collectGarbage = (): void => {
  setFlagsFromString("--expose-gc")
  ;(runInNewContext("gc") as () => void)()
}

/**
 * The bytes of ArrayBuffers once garbage is collected. V8 frees the backing stores of dead
 * ArrayBuffers on a background thread, so on a busy machine one read right after `gc()` can still
 * count the freed slabs: read again after short pauses and keep the lowest.
 */
const settledArrayBuffers = async (): Promise<number> => {
  let lowest = Number.POSITIVE_INFINITY
  for (let round = 0; round < 10; round++) {
    collectGarbage()
    lowest = Math.min(lowest, process.memoryUsage().arrayBuffers)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return lowest
}

describe("SortedJobs", () => {
  it("orders ids as Valkey orders members: by their UTF-8 bytes", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), fc.string({ unit: "grapheme" }), (a, b) => {
        expect(Math.sign(compareUtf8(a, b))).toBe(Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b))))
      }),
      { numRuns: 2000, seed: 20261206 }
    )
    // Where UTF-16 units disagree with the bytes: a code point past the BMP after U+FF21.
    expect(compareUtf8("jo-\u{1F600}", "jo-\uFF21")).toBeGreaterThan(0)
  })

  it("keeps no encoded copy per job: thousands of rows added between other allocations pin no Buffer pool slabs", async () => {
    const jobs = SortedJobs.of([])
    let garbage = 0
    collectGarbage()
    const before = process.memoryUsage().arrayBuffers
    for (let n = 0; n < 5000; n++) {
      // Other small Buffers in between, as MQTT and Valkey replies are: each takes a slice of Node's 8 KB pool.
      garbage += Buffer.from("x".repeat(3000)).length
      jobs.set(row(`jo-${n}`))
    }
    const pinned = (await settledArrayBuffers()) - before
    expect(jobs.size).toBe(5000)
    expect(garbage).toBe(15_000_000)
    // An encoded id per row held a slice, and so a whole slab, per row: about 20 MB here.
    expect(pinned).toBeLessThan(1024 * 1024)
  })
})
