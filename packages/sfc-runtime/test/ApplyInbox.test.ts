import { describe, expect, it } from "@effect/vitest"
import { ApplyInbox, type PendingInput } from "../src/ApplyInbox.js"

/** The loop's inbox without a server: which inputs a tick takes, and in what order they come back. */

const input = (jobId: string, n: number): PendingInput & { readonly n: number } => ({
  n, jobId, input: { type: "tick" }, appliedEvent: undefined, resume: () => {}, attempt: 1, fresh: false, cancelled: false, answered: false
})
const numbers = (groups: Map<string, Array<PendingInput>>) =>
  Object.fromEntries([...groups].map(([jobId, items]) => [jobId, items.map((item) => (item as ReturnType<typeof input>).n)]))

describe("ApplyInbox", () => {
  it("groups a tick's inputs by job, in arrival order, up to the limit", () => {
    const inbox = new ApplyInbox(100)
    ;[input("a", 1), input("b", 2), input("a", 3), input("c", 4)].forEach((item) => inbox.offer(item))
    expect(numbers(inbox.take(3))).toEqual({ a: [1, 3], b: [2] })
    expect(inbox.size).toBe(1)
  })

  it("a job in a tick is in no other tick until released", () => {
    const inbox = new ApplyInbox(100)
    inbox.offer(input("a", 1))
    expect(numbers(inbox.take(10))).toEqual({ a: [1] })
    inbox.offer(input("a", 2))
    inbox.offer(input("b", 3))
    expect(numbers(inbox.take(10))).toEqual({ b: [3] })
    expect(inbox.hasWork()).toBe(false)
    inbox.release(["a"])
    expect(numbers(inbox.take(10))).toEqual({ a: [2] })
  })

  it("a job cut by the limit keeps all its later inputs for the next tick (no input overtakes another of its job)", () => {
    const inbox = new ApplyInbox(100)
    ;[input("a", 1), input("b", 2), input("a", 3)].forEach((item) => inbox.offer(item))
    expect(numbers(inbox.take(1))).toEqual({ a: [1] })
    inbox.release(["a"])
    expect(numbers(inbox.take(10))).toEqual({ b: [2], a: [3] })
  })

  it("inputs given back go ahead of what arrived since; cancelled and answered inputs are dropped", () => {
    const inbox = new ApplyInbox(100)
    const first = input("a", 1)
    inbox.offer(first)
    inbox.take(10)
    inbox.offer(input("a", 2))
    const cancelled = input("b", 3)
    cancelled.cancelled = true
    inbox.offer(cancelled)
    inbox.release(["a"])
    inbox.giveBack([first])
    expect(numbers(inbox.take(10))).toEqual({ a: [1, 2] })
    expect(inbox.drainAll()).toEqual([])
  })

  it("an event is in a job's tick once: its redelivery waits for the next tick, with the job's later inputs", () => {
    const inbox = new ApplyInbox(100)
    const event = (jobId: string, n: number, id: string) => ({ ...input(jobId, n), appliedEvent: { source: "urn:s", id } })
    ;[event("a", 1, "e1"), event("a", 2, "e1"), input("a", 3), event("b", 4, "e1")].forEach((item) => inbox.offer(item))
    expect(numbers(inbox.take(10))).toEqual({ a: [1], b: [4] })
    inbox.release(["a", "b"])
    expect(numbers(inbox.take(10))).toEqual({ a: [2, 3] })
  })

  it("counts the offers that found it full, and keeps them", () => {
    const inbox = new ApplyInbox(2)
    expect([1, 2, 3].map((n) => inbox.offer(input("a", n)))).toEqual([true, true, false])
    expect(inbox.fullCount).toBe(1)
    expect(inbox.size).toBe(3)
  })
})
