import { Effect, Layer, Ref } from "effect"
import { Valkey } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { randomPrefix } from "@microdcs/test-utils"
import { testStore } from "@microdcs/testkit"
import {
  type CounterRequest,
  CounterSource,
  CounterUnavailable,
  type EngineOptions,
  InProcessStation,
  SfcEngineProcesses,
  SfcRuntimeServices,
  type StationScript
} from "@microdcs/sfc-runtime"
import { testEngineOptions } from "./RuntimeFixtures.js"

/**
 * A counter source for the runtime tests (not a test file itself), against the real server: a
 * plain Valkey hash (`{prefix}:test:counters`, field `{counter}|{value}`), the search-key value
 * from the step's results (`tool`), else from the job order's equipment.
 */

export interface CounterWorld {
  readonly requests: Array<CounterRequest>
  readonly failing: Ref.Ref<boolean>
}

const toolOf = (request: CounterRequest): string | undefined => {
  for (const result of Object.values(request.results)) {
    const tool = (result as { readonly tool?: unknown } | null)?.tool
    if (typeof tool === "string") return tool
  }
  const equipment = (request.jobOrder as { readonly EquipmentRequirement?: ReadonlyArray<{ readonly EquipmentID?: unknown }> } | undefined)
    ?.EquipmentRequirement?.[0]?.EquipmentID
  return typeof equipment === "string" ? equipment : undefined
}

const counterKey = Effect.map(Valkey, (valkey) => `${valkey.keys.prefix}:test:counters`)

/** Sets a counter's value for one search-key value. */
export const setCounter = (counter: string, value: string, total: number) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const key = yield* counterKey
    yield* unsafeCommand(valkey, "hset", (c) => c.hset(key, `${counter}|${value}`, String(total)))
  })

const hashCounterSource = (world: CounterWorld) =>
  Layer.effect(
    CounterSource,
    Effect.gen(function* () {
      const valkey = yield* Valkey
      const key = yield* counterKey
      return {
        read: (request) =>
          Effect.gen(function* () {
            world.requests.push(request)
            if (yield* Ref.get(world.failing)) return yield* new CounterUnavailable({ message: "the journal is unreachable" })
            const tool = toolOf(request)
            // A value the source cannot place is left out: the job then fails naming the counter.
            if (tool === undefined) return {}
            const values: Record<string, number> = {}
            for (const counter of request.counters) {
              const stored = yield* unsafeCommand(valkey, "hget", (c) => c.hget(key, `${counter}|${tool}`))
                .pipe(Effect.mapError((e) => new CounterUnavailable({ message: e.message, counter })))
              values[counter] = stored === null ? 0 : Number(stored)
            }
            return values
          })
      }
    })
  )

/** The engine world of the runtime tests with a counter source under the runtime services. */
export const counterWorld = (script: StationScript, engine: Partial<EngineOptions> = {}) => {
  const world: CounterWorld = { requests: [], failing: Ref.makeUnsafe(false) }
  const store = testStore({ prefix: randomPrefix("sfc-counters") })
  const station = InProcessStation(script)
  const layer = SfcEngineProcesses({ ...testEngineOptions, ...engine }).pipe(
    Layer.provideMerge(station.layer),
    Layer.provideMerge(SfcRuntimeServices),
    Layer.provideMerge(hashCounterSource(world)),
    Layer.provideMerge(store)
  )
  return { layer, world, station: station.log }
}

