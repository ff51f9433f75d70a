import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Fiber, Layer } from "effect"
import { Valkey } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { randomPrefix } from "@microdcs/test-utils"
import { testStore } from "@microdcs/testkit"
import { CommandDispatch, Executions, SfcEngineProcesses, SfcRuntimeServices, StationPort } from "@microdcs/sfc-runtime"
import { type CommandEntry, correlationIdOf } from "@microdcs/sfc"
import { engineWorld, eventually, putJobOrder, putWorkMaster, testEngineOptions } from "./RuntimeFixtures.js"
import { jobOrderFor, linearRecipe, push, recipeWorkMaster, responseSummary, SCOPE, startInstance, untilResponse } from "./RuntimeKit.js"

/**
 * A direct send under way when its writer is stopped (the reconcile or sweep loop, an ingest, a
 * handler past the shutdown grace: whatever fiber made the CAS) must end as sent, not as "not
 * sent": the station may already have the command, and the outbox handler, or the instance
 * restarted, would send it a second time (the MQTT restart test saw two commands).
 */

/** The station's side: every command it received, and (`holding`) a hold on the first `tighten` until the test lets go. */
const makeStation = (holding = true) =>
  Effect.gen(function* () {
    const received: Array<CommandEntry> = []
    const tightenArrived = yield* Deferred.make<void>()
    const acknowledge = yield* Deferred.make<void>()
    const layer = Layer.succeed(StationPort, {
      send: (command: CommandEntry) =>
        Effect.gen(function* () {
          received.push(command)
          if (!holding || command.action !== "tighten" || received.filter((c) => c.action === "tighten").length > 1) return
          // The station has it; its acknowledgement (a PUBACK) is still on the way.
          yield* Deferred.succeed(tightenArrived, undefined)
          yield* Deferred.await(acknowledge)
        })
    })
    const sent = (action: string) => received.filter((c) => c.action === action).map((c) => [c.correlationId, c.attempt])
    return { layer, tightenArrived, acknowledge, sent } as const
  })

/** The engine group on the work stream has read and acknowledged everything (XINFO GROUPS: lag and pending 0). */
const workCaughtUp = (group: string) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const stream = yield* valkey.key("sfcWork", { scope: SCOPE })
    const groups = (yield* unsafeCommand(valkey, "xinfo", (c) => c.call("XINFO", "GROUPS", stream))) as Array<Array<unknown>>
    const info = groups.map((flat) => Object.fromEntries(flat.flatMap((v, i) => (i % 2 === 0 ? [[String(v), flat[i + 1]]] : []))))
    const mine = info.find((g) => g["name"] === group)
    return mine !== undefined && Number(mine["pending"]) === 0 && Number(mine["lag"]) === 0 ? true : undefined
  })

describe("SFC runtime: the direct send can be turned off", () => {
  it.live("with directSend false no sender is installed and every command goes through the outbox handler", () => {
    const world = engineWorld({ onCommand: (c) => ({ data: { done: c.action } }) }, { engine: { directSend: false } })
    return Effect.gen(function* () {
      expect((yield* CommandDispatch).current()).toBeUndefined()
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-off", linearRecipe(["Fit", "Tighten"], [push("fit", "Fit"), push("tighten", "Tighten")])))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-off", "wm-off"))
      expect(responseSummary(yield* untilResponse("jo-off", 20_000))).toMatchObject({ state: "Ended_Completed", data: { fit: { done: "fit" }, tighten: { done: "tighten" } } })
      expect(world.station.commands.map((c) => [c.action, c.attempt])).toEqual([["fit", 1], ["tighten", 1]])
    }).pipe(Effect.provide(world.layer), Effect.scoped)
  })
})

describe("SFC runtime: a direct send under way when its writer stops", () => {
  it.live("is waited for and counts as sent: neither this instance nor the restarted one sends it again", () => {
    const prefix = randomPrefix("sfc-ds-stop")
    const store = testStore({ prefix })
    const recipe = linearRecipe(["Fit", "Tighten"], [push("fit", "Fit", { TimeoutSeconds: 120 }), push("tighten", "Tighten", { TimeoutSeconds: 120 })])
    return Effect.gen(function* () {
      const station = yield* makeStation()
      const instance = (consumer: string) =>
        SfcEngineProcesses({ ...testEngineOptions, consumer, directSend: true }).pipe(
          Layer.provideMerge(station.layer),
          Layer.provideMerge(SfcRuntimeServices),
          Layer.provideMerge(store)
        )
      const first = yield* startInstance(instance("first"))
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-stop", recipe))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-stop", "wm-stop"))
      yield* eventually(Effect.sync(() => (station.sent("fit").length > 0 ? true : undefined)))

      // The writer: fit's reply, whose CAS emits tighten, sent directly from this fiber. `rest`
      // stands for the rest of a stopping engine: interrupted with the writer, it lets the station
      // answer. (Not the writer's child: since effect 4 an interrupted fiber's children are only
      // interrupted once it ends, and the writer waits for its send without being interruptible.)
      const executions = Context.get(first.context, Executions)
      const rest = yield* Effect.forkChild(Effect.onInterrupt(Effect.never, () => Deferred.succeed(station.acknowledge, undefined)), {
        startImmediately: true
      })
      const writer = yield* Effect.forkChild(
        executions.apply("jo-stop", { type: "event", correlationId: correlationIdOf("jo-stop", "fit", 1), data: { fitted: true } })
      )
      yield* Deferred.await(station.tightenArrived)
      yield* Fiber.interruptAll([writer, rest])

      // The work poller of the same instance skips tighten's outbox entry; then a graceful restart.
      yield* eventually(workCaughtUp(testEngineOptions.workGroup ?? "sfc-engine"))
      yield* first.stop
      const second = yield* startInstance(instance("second"))
      yield* eventually(workCaughtUp(testEngineOptions.workGroup ?? "sfc-engine"))
      const reply = { type: "event", correlationId: correlationIdOf("jo-stop", "tighten", 1), data: { tightened: true } } as const
      yield* Context.get(second.context, Executions).apply("jo-stop", reply)

      expect(responseSummary(yield* untilResponse("jo-stop", 20_000))).toMatchObject({ state: "Ended_Completed", data: { tighten: { tightened: true } } })
      expect(station.sent("fit")).toEqual([[correlationIdOf("jo-stop", "fit", 1), 1]])
      expect(station.sent("tighten")).toEqual([[correlationIdOf("jo-stop", "tighten", 1), 1]])
    }).pipe(Effect.provide(store), Effect.scoped)
  })

  it.live("still under way after the shutdown grace, it is left to the next instance, which sends it once with the same correlation id", () => {
    const prefix = randomPrefix("sfc-ds-grace")
    const store = testStore({ prefix })
    const recipe = linearRecipe(["Fit", "Tighten"], [push("fit", "Fit", { TimeoutSeconds: 120 }), push("tighten", "Tighten", { TimeoutSeconds: 120 })])
    return Effect.gen(function* () {
      // The stopping instance's station never acknowledges tighten (a link that hangs).
      const hanging = yield* makeStation()
      const healthy = yield* makeStation(false)
      const instance = (consumer: string, station: Layer.Layer<StationPort>, shutdownGraceMs: number) =>
        SfcEngineProcesses({ ...testEngineOptions, consumer, directSend: true, shutdownGraceMs }).pipe(
          Layer.provideMerge(station),
          Layer.provideMerge(SfcRuntimeServices),
          Layer.provideMerge(store)
        )
      const first = yield* startInstance(instance("first", hanging.layer, 200))
      yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-grace", recipe))
      yield* putJobOrder(SCOPE, jobOrderFor("jo-grace", "wm-grace"))
      yield* eventually(Effect.sync(() => (hanging.sent("fit").length > 0 ? true : undefined)))
      const executions = Context.get(first.context, Executions)
      const writer = yield* Effect.forkChild(
        executions.apply("jo-grace", { type: "event", correlationId: correlationIdOf("jo-grace", "fit", 1), data: { fitted: true } })
      )
      yield* Deferred.await(hanging.tightenArrived)

      // The stop gives the send its grace, then the write stops waiting: the outcome is unknown,
      // so the stopping instance neither sends tighten again nor acknowledges its entry.
      yield* first.stop
      expect((yield* Fiber.join(writer))._tag).toBe("Written")
      const second = yield* startInstance(instance("second", healthy.layer, 2_000))
      yield* eventually(Effect.sync(() => (healthy.sent("tighten").length > 0 ? true : undefined)), 20_000)
      const reply = { type: "event", correlationId: correlationIdOf("jo-grace", "tighten", 1), data: { tightened: true } } as const
      yield* Context.get(second.context, Executions).apply("jo-grace", reply)

      expect(responseSummary(yield* untilResponse("jo-grace", 20_000))).toMatchObject({ state: "Ended_Completed", data: { tighten: { tightened: true } } })
      expect(hanging.sent("tighten")).toEqual([[correlationIdOf("jo-grace", "tighten", 1), 1]])
      expect(healthy.sent("tighten")).toEqual([[correlationIdOf("jo-grace", "tighten", 1), 1]])
      expect(healthy.sent("fit")).toEqual([])
    }).pipe(Effect.provide(store), Effect.scoped)
  })
})
