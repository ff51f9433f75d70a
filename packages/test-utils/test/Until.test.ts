import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer } from "effect"
import { ConditionNotReached, eventually, startInstance, startScoped, until } from "@microdcs/test-utils"

describe("until", () => {
  it.live("returns the first value the check accepts", () =>
    Effect.gen(function* () {
      let calls = 0
      const value = yield* until(Effect.sync(() => ++calls), (n) => n === 3, { every: "1 millis" })
      expect(value).toBe(3)
      expect(calls).toBe(3)
    }))

  it.live("fails with ConditionNotReached after the deadline, naming the condition", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(until(Effect.succeed(false), (done) => done, { within: "50 millis", what: "never" }))
      expect(error).toBeInstanceOf(ConditionNotReached)
      expect(error).toMatchObject({ _tag: "ConditionNotReached", what: "never", within: "50ms" })
    }))

  it.live("takes a bare deadline in milliseconds", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(until(Effect.succeed(0), (n) => n > 0, 30))
      expect(error).toMatchObject({ _tag: "ConditionNotReached", within: "30ms" })
    }))

  it.live("ends the wait on an error of the effect", () =>
    Effect.gen(function* () {
      expect(yield* Effect.flip(until(Effect.fail("boom" as const), () => true))).toBe("boom")
    }))
})

describe("eventually", () => {
  it.live("waits until the check returns a value", () =>
    Effect.gen(function* () {
      let calls = 0
      expect(yield* eventually(Effect.sync(() => (++calls < 3 ? undefined : "ready")), { every: "1 millis" })).toBe("ready")
    }))

  it.live("treats null and false as values, only undefined as not yet", () =>
    Effect.gen(function* () {
      expect(yield* eventually(Effect.succeed(false))).toBe(false)
      expect(yield* eventually(Effect.succeed(null))).toBeNull()
    }))
})

class Probe extends Context.Service<Probe, { readonly id: number }>()("Probe") {}

describe("startScoped and startInstance", () => {
  it.live("stop closes what was started; the test's scope closes what was not stopped", () =>
    Effect.gen(function* () {
      const closed: Array<string> = []
      const resource = (name: string) => Effect.acquireRelease(Effect.succeed(name), () => Effect.sync(() => closed.push(name)))
      yield* Effect.scoped(
        Effect.gen(function* () {
          const first = yield* startScoped(resource("first"))
          yield* startScoped(resource("second"))
          expect(first.value).toBe("first")
          yield* first.stop
          expect(closed).toEqual(["first"])
        })
      )
      expect(closed).toEqual(["first", "second"])
    }))

  it.live("gives the built layer's context", () =>
    Effect.gen(function* () {
      const { context, stop } = yield* startInstance(Layer.succeed(Probe, { id: 7 }))
      expect(Context.get(context, Probe).id).toBe(7)
      expect(Exit.isSuccess(yield* Effect.exit(stop))).toBe(true)
    }).pipe(Effect.scoped))
})
