import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { randomPrefix } from "@microdcs/test-utils"
import { testStore } from "@microdcs/testkit"
import { CommandNotSent, InProcessStation, SfcEngineProcesses, SfcRuntimeServices, StationPort } from "@microdcs/sfc-runtime"
import { putJobOrder, putWorkMaster, testEngineOptions } from "./RuntimeFixtures.js"
import { jobOrderFor, linearRecipe, push, recipeWorkMaster, SCOPE, untilJobOrderIs } from "./RuntimeKit.js"

// Issue 11: a write the engine carries out itself appends its outbox entries without nudging the
// work consumers. When its direct send fails, the send nudges them, so the outbox handler takes
// the entry at once instead of at the next fallback poll (here two minutes away, longer than
// the test may take; the commands' deadlines, whose resend would heal it too, are ten minutes away).

describe("SFC runtime: a direct send that fails", () => {
  it.live("is taken over by the outbox handler at once, nudged, long before the fallback poll", () => {
    const station = InProcessStation({})
    const failed: Array<string> = []
    // A link that is down for the first send of every command; the handler's resend goes through.
    const flaky = Layer.effect(
      StationPort,
      Effect.map(StationPort, (inner) => ({
        send: (command: Parameters<typeof inner.send>[0]) =>
          Effect.suspend(() => {
            if (failed.includes(command.correlationId)) return inner.send(command)
            failed.push(command.correlationId)
            return Effect.fail(new CommandNotSent({ correlationId: command.correlationId, message: "link down" }))
          })
      }))
    ).pipe(Layer.provide(station.layer))
    const layer = SfcEngineProcesses({ ...testEngineOptions, fallbackIntervalMs: 120_000, directSend: true }).pipe(
      Layer.provideMerge(flaky),
      Layer.provideMerge(SfcRuntimeServices),
      Layer.provideMerge(testStore({ prefix: randomPrefix("sfc-failed-send") }))
    )
    const workMaster = recipeWorkMaster("wm-flaky", linearRecipe(["A", "B"], [push("a1", "A", { TimeoutSeconds: 600 }), push("b1", "B", { TimeoutSeconds: 600 })]))
    return Effect.gen(function* () {
      yield* putWorkMaster(SCOPE, workMaster)
      yield* putJobOrder(SCOPE, jobOrderFor("jo-flaky", "wm-flaky"))
      expect(yield* untilJobOrderIs("jo-flaky", "Ended_Completed", { within: "30 seconds" })).toBe("Ended_Completed")
      // Each command failed once from the writer and went out again from its entry, same correlation id.
      expect(failed).toHaveLength(2)
      expect(station.log.commands.map((c) => c.correlationId)).toEqual(failed)
    }).pipe(Effect.provide(layer))
  }, 60_000)
})
