import { Layer } from "effect"
import { randomPrefix } from "@microdcs/test-utils"
import { testStore } from "@microdcs/testkit"
import {
  type EngineOptions,
  type EngineRoles,
  InProcessStation,
  SfcEngineProcesses,
  SfcRuntimeServices,
  type StationScript
} from "@microdcs/sfc-runtime"

// The store-level world (puts as job control would, polling with a deadline) is shared by every package's tests.
export { eventually, fixture } from "@microdcs/test-utils"
export { putJobOrder, putWorkMaster } from "@microdcs/testkit"

/** Fast settings for tests: quick sweeps and polls, short claim idle. */
export const testEngineOptions: Partial<EngineOptions> = {
  sweepIntervalMs: 50,
  fallbackIntervalMs: 100,
  reconcileIntervalMs: 60_000,
  claimIdleMs: 2_000
}

/** The store over the run's server with a fresh prefix, and one engine with an in-process station. */
export const engineWorld = (
  script: StationScript,
  options: { readonly prefix?: string; readonly engine?: Partial<EngineOptions>; readonly roles?: EngineRoles } = {}
) => {
  const store = testStore({ prefix: options.prefix ?? randomPrefix("sfc") })
  const station = InProcessStation(script)
  const runtime = SfcRuntimeServices
  const layer = SfcEngineProcesses({ ...testEngineOptions, ...options.engine }, options.roles).pipe(
    Layer.provideMerge(station.layer),
    Layer.provideMerge(runtime),
    Layer.provideMerge(store)
  )
  return { layer, station: station.log }
}
