import { Deferred, Effect, Fiber, Ref } from "effect"
import { TestClock } from "effect/testing"
import { expect, layer } from "@effect/vitest"
import { ClaimHolders, DedupeStore } from "@microdcs/store"
import { until } from "@microdcs/test-utils"
import { CLAIM_HOLDER_TTL_MS, exactlyOnce, keepClaimHolder } from "@microdcs/job-control"
import { handle, methodRequest, world } from "./Kit.js"

class HandlerFailed {
  readonly _tag = "HandlerFailed"
}

layer(world())("exactlyOnce", (it) => {
  it.effect("the same message twice is processed once", () =>
    Effect.gen(function* () {
      const runs = yield* Ref.make(0)
      const process = Ref.updateAndGet(runs, (n) => n + 1)
      const first = yield* exactlyOnce({ source: "urn:mes", id: "m-1" }, process)
      const second = yield* exactlyOnce({ source: "urn:mes", id: "m-1" }, process)
      expect(first).toEqual({ _tag: "Processed", value: 1 })
      expect(second).toEqual({ _tag: "Duplicate", reason: "done" })
      expect(yield* Ref.get(runs)).toBe(1)
      // The same id from another source is another event.
      expect(yield* exactlyOnce({ source: "urn:other", id: "m-1" }, process)).toEqual({ _tag: "Processed", value: 2 })
      // Done is remembered for the done TTL.
      const remaining = yield* Effect.flatMap(DedupeStore, (d) => d.leaseRemaining("urn:mes", "m-1"))
      expect(remaining).toBeGreaterThan(9 * 60_000)
      expect(remaining).toBeLessThanOrEqual(10 * 60_000)
    })
  )

  it.effect("a duplicate arriving while the first is still processing is held (not skipped), then a done duplicate", () =>
    Effect.gen(function* () {
      const gate = yield* Deferred.make<void>()
      const started = yield* Deferred.make<void>()
      const first = yield* Effect.forkChild(
        exactlyOnce({ source: "urn:mes", id: "m-2", leaseMs: 5_000 }, Effect.andThen(Deferred.succeed(started, undefined), Effect.as(Deferred.await(gate), "first")))
      )
      yield* Deferred.await(started)
      const second = yield* exactlyOnce({ source: "urn:mes", id: "m-2" }, Effect.succeed("second"))
      // Held with the first claim's remaining lease: the caller must not acknowledge it yet.
      expect(second._tag).toBe("Held")
      expect(second._tag === "Held" && second.remainingMs).toBeGreaterThan(0)
      expect(second._tag === "Held" && second.remainingMs).toBeLessThanOrEqual(5_000)
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Fiber.join(first)).toEqual({ _tag: "Processed", value: "first" })
      expect(yield* exactlyOnce({ source: "urn:mes", id: "m-2" }, Effect.succeed("second"))).toEqual({ _tag: "Duplicate", reason: "done" })
    })
  )

  it.effect("a holder that crashed between claim and done: the duplicate is held, then processed once the lease ends", () =>
    Effect.gen(function* () {
      const dedupe = yield* DedupeStore
      // The crashed holder: it claimed and will never mark done nor release.
      yield* dedupe.claim("urn:mes", "m-crash", "dead-holder", 400)
      const runs = yield* Ref.make(0)
      const process = Ref.updateAndGet(runs, (n) => n + 1)
      const held = yield* exactlyOnce({ source: "urn:mes", id: "m-crash" }, process)
      expect(held._tag).toBe("Held")
      expect(held._tag === "Held" && held.remainingMs).toBeLessThanOrEqual(400)
      expect(yield* Ref.get(runs)).toBe(0)
      // Retried as the lease's remaining time says, until it is no longer held (bounded).
      const retried = yield* until(exactlyOnce({ source: "urn:mes", id: "m-crash" }, process), (outcome) => outcome._tag !== "Held").pipe(
        // The lease runs out in real time.
        TestClock.withLive
      )
      expect(retried).toEqual({ _tag: "Processed", value: 1 })
      expect(yield* Ref.get(runs)).toBe(1)
    })
  )

  it.effect("the reply is kept with the done mark and a duplicate gets it again", () =>
    Effect.gen(function* () {
      const runs = yield* Ref.make(0)
      const process = Ref.updateAndGet(runs, (n) => n + 1)
      const options = { source: "urn:mes", id: "m-reply", storedReply: (n: number) => JSON.stringify({ answer: n }) }
      expect(yield* exactlyOnce(options, process)).toEqual({ _tag: "Processed", value: 1 })
      const again = yield* exactlyOnce(options, process)
      expect(again).toEqual({ _tag: "Duplicate", reason: "done", reply: JSON.stringify({ answer: 1 }) })
      expect(yield* Ref.get(runs)).toBe(1)
      // Without a kept reply, a duplicate carries none.
      yield* exactlyOnce({ source: "urn:mes", id: "m-noreply" }, process)
      expect(yield* exactlyOnce({ source: "urn:mes", id: "m-noreply" }, process)).toEqual({ _tag: "Duplicate", reason: "done", reply: undefined })
    })
  )

  it.effect("a reply the store refuses to keep (over the size limit) still marks the event done", () =>
    Effect.gen(function* () {
      const runs = yield* Ref.make(0)
      const process = Ref.updateAndGet(runs, (n) => n + 1)
      const huge = () => JSON.stringify("x".repeat(2 * 1024 * 1024))
      expect(yield* exactlyOnce({ source: "urn:mes", id: "m-huge", storedReply: huge }, process)).toEqual({ _tag: "Processed", value: 1 })
      expect(yield* exactlyOnce({ source: "urn:mes", id: "m-huge", storedReply: huge }, process)).toEqual({ _tag: "Duplicate", reason: "done", reply: undefined })
      expect(yield* Ref.get(runs)).toBe(1)
    })
  )

  it.effect("a failing handler releases its claim, and the redelivery is processed", () =>
    Effect.gen(function* () {
      const dedupe = yield* DedupeStore
      const failed = yield* Effect.flip(exactlyOnce({ source: "urn:mes", id: "m-3", leaseMs: 60_000 }, Effect.fail(new HandlerFailed())))
      expect(failed).toBeInstanceOf(HandlerFailed)
      // Released, not left to run out its 60 s lease.
      expect(yield* dedupe.leaseRemaining("urn:mes", "m-3")).toBe(0)
      expect(yield* exactlyOnce({ source: "urn:mes", id: "m-3" }, Effect.succeed("retried"))).toEqual({ _tag: "Processed", value: "retried" })
    })
  )

  it.effect("an interrupted handler releases its claim too", () =>
    Effect.gen(function* () {
      const dedupe = yield* DedupeStore
      const started = yield* Deferred.make<void>()
      const fiber = yield* Effect.forkChild(exactlyOnce({ source: "urn:mes", id: "m-4" }, Effect.andThen(Deferred.succeed(started, undefined), Effect.never)))
      yield* Deferred.await(started)
      yield* Fiber.interrupt(fiber)
      expect(yield* dedupe.leaseRemaining("urn:mes", "m-4")).toBe(0)
      expect(yield* exactlyOnce({ source: "urn:mes", id: "m-4" }, Effect.succeed(1))).toEqual({ _tag: "Processed", value: 1 })
    })
  )

  it.effect("around the processor: a redelivered Store is answered once and emits one status event", () =>
    Effect.gen(function* () {
      const req = methodRequest("Store", "dedupe", { JobOrder: { JobOrderID: "once" } })
      const first = yield* exactlyOnce({ source: req.source, id: req.id }, handle(req))
      const again = yield* exactlyOnce({ source: req.source, id: req.id }, handle(req))
      expect(first._tag === "Processed" && first.value.statusEvents).toHaveLength(1)
      expect(again).toEqual({ _tag: "Duplicate", reason: "done" })
    })
  )

  it.effect("a live but slow holder is never taken over: its duplicate stays held past the liveness lifetime, then is a done duplicate", () =>
    Effect.gen(function* () {
      const holder = yield* keepClaimHolder("slow")
      const waiter = yield* keepClaimHolder("waiter")
      const started = yield* Deferred.make<void>()
      // The handler outlives the liveness key's lifetime; the renewals go on beside it.
      const slow = Effect.andThen(Deferred.succeed(started, undefined), Effect.as(Effect.sleep(CLAIM_HOLDER_TTL_MS + 1_500), "slow"))
      const first = yield* Effect.forkChild(exactlyOnce({ source: "urn:mes", id: "m-slow", holder }, slow))
      yield* Deferred.await(started)
      const outcomes: Array<string> = []
      while (first.pollUnsafe() === undefined) {
        const duplicate = yield* exactlyOnce({ source: "urn:mes", id: "m-slow", holder: waiter }, Effect.succeed("duplicate"))
        outcomes.push(duplicate._tag)
        if (duplicate._tag === "Held") expect(duplicate.remainingMs).toBeLessThanOrEqual(CLAIM_HOLDER_TTL_MS)
        yield* Effect.sleep("250 millis")
      }
      expect(yield* Fiber.join(first)).toEqual({ _tag: "Processed", value: "slow" })
      expect(outcomes.length).toBeGreaterThan(10)
      expect(new Set(outcomes)).toEqual(new Set(["Held"]))
      expect(yield* exactlyOnce({ source: "urn:mes", id: "m-slow", holder: waiter }, Effect.succeed("duplicate"))).toEqual({ _tag: "Duplicate", reason: "done" })
    }).pipe(TestClock.withLive)
  )

  it.effect("a holder that died: its duplicate takes the claim over once the liveness key is gone, long before the lease ends, and the holder's late done mark is LeaseLost", () =>
    Effect.gen(function* () {
      // The holder's last renewal, then nothing: it died right after it.
      const dead = yield* (yield* ClaimHolders).of("dead-run", CLAIM_HOLDER_TTL_MS)
      yield* dead.beat
      const release = yield* Deferred.make<void>()
      const claimed = yield* Deferred.make<void>()
      const runs = yield* Ref.make(0)
      const zombie = yield* Effect.forkChild(
        exactlyOnce(
          { source: "urn:mes", id: "m-dead", holder: dead.holder, leaseMs: 60_000 },
          Effect.andThen(Deferred.succeed(claimed, undefined), Effect.andThen(Deferred.await(release), Ref.updateAndGet(runs, (n) => n + 1)))
        )
      )
      yield* Deferred.await(claimed)
      const waiter = yield* keepClaimHolder("waiter")
      const duplicate = exactlyOnce({ source: "urn:mes", id: "m-dead", holder: waiter, leaseMs: 60_000 }, Ref.updateAndGet(runs, (n) => n + 1))
      const first = yield* duplicate
      expect(first._tag).toBe("Held")
      expect(first._tag === "Held" && first.remainingMs).toBeLessThanOrEqual(CLAIM_HOLDER_TTL_MS)
      // Well within the 60 s lease: the liveness key lives 3 s after the last renewal.
      const taken = yield* until(duplicate, (outcome) => outcome._tag !== "Held", { within: "6 seconds", every: "100 millis", what: "the takeover" })
      expect(taken).toEqual({ _tag: "Processed", value: 1 })
      // The holder was not dead after all: its done mark finds the waiter's done mark.
      yield* Deferred.succeed(release, undefined)
      expect(yield* Effect.flip(Fiber.join(zombie))).toMatchObject({ _tag: "LeaseLost" })
      expect(yield* duplicate).toEqual({ _tag: "Duplicate", reason: "done" })
    }).pipe(TestClock.withLive)
  )

  it.effect("a process restarted under the same name is another holder: the dead run's claims are taken over", () =>
    Effect.gen(function* () {
      const dedupe = yield* DedupeStore
      const liveness = yield* (yield* ClaimHolders).of("island-1.run-1", CLAIM_HOLDER_TTL_MS)
      // The first run claimed and died without a trace of liveness left.
      yield* dedupe.claim("urn:mes", "m-restart", `00000000-0000-4000-8000-000000000000@${liveness.holder}`, 60_000)
      const restarted = yield* keepClaimHolder("island-1")
      expect(restarted).toMatch(/^island-1\./)
      expect(restarted).not.toBe(liveness.holder)
      expect(yield* exactlyOnce({ source: "urn:mes", id: "m-restart", holder: restarted }, Effect.succeed("again"))).toEqual({ _tag: "Processed", value: "again" })
    }).pipe(TestClock.withLive)
  )
})
