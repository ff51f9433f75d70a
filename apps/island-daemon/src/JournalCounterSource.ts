import { Effect, Layer, Option } from "effect"
import { Journal, type JournalConfig, type SearchKeyConfig } from "@microdcs/journal"
import { type CounterRequest, CounterSource, CounterUnavailable } from "@microdcs/sfc-runtime"
import { JournalRecordsInFlight } from "./JournalRecordsInFlight.js"

/**
 * The engine's counters (`counter.nok_torque_1h` in a recipe condition) read from
 * the journal: counter names belong to the scope, so the name finds its journal and search key;
 * the key's value comes from the step's action results, else from the job order.
 */

/** A search-key value as text: strings as they are, finite numbers and booleans as their text. */
const asValue = (value: unknown): string | undefined => {
  if (typeof value === "string") return value.length > 0 ? value : undefined
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : undefined
  if (typeof value === "boolean") return String(value)
  return undefined
}

/** The value at a `.`-path, own properties only (as the journal reads its paths). */
const at = (from: unknown, path: string): unknown => {
  let here: unknown = from
  for (const segment of path.split(".")) {
    if (Array.isArray(here)) here = /^\d+$/.test(segment) ? here[Number(segment)] : undefined
    else if (typeof here === "object" && here !== null && Object.hasOwn(here, segment)) here = (here as Record<string, unknown>)[segment]
    else return undefined
  }
  return here
}

/**
 * An action result is the `data` of the station's reply or event: the search key's path read
 * without its `data.` (`data.tool_id` → `tool_id`), else a field named like the search key.
 */
const fromResults = (results: Readonly<Record<string, unknown>>, key: SearchKeyConfig): string | undefined => {
  const inData = key.path.startsWith("data.") ? key.path.slice("data.".length) : undefined
  for (const result of Object.values(results)) {
    const value = (inData === undefined ? undefined : asValue(at(result, inData))) ?? asValue(at(result, key.name))
    if (value !== undefined) return value
  }
  return undefined
}

/** Where a job order (ISA-95) names the entity a search key stands for, by the key's name. */
const requirementPaths: Readonly<Record<string, string>> = {
  equipment: "EquipmentRequirements.0.ID",
  station: "EquipmentRequirements.0.ID",
  tool: "PhysicalAssetRequirements.0.ID",
  physicalasset: "PhysicalAssetRequirements.0.ID",
  asset: "PhysicalAssetRequirements.0.ID",
  personnel: "PersonnelRequirements.0.ID",
  operator: "PersonnelRequirements.0.ID",
  material: "MaterialRequirements.0.MaterialDefinitionID",
  materialdefinition: "MaterialRequirements.0.MaterialDefinitionID",
  materialclass: "MaterialRequirements.0.MaterialClassID"
}

/**
 * The job order's value for a search key: the job order id for a key on `jobid` (or named
 * job/joborder), the first requirement of the kind the key's name says (`equipment`, `tool`,
 * `personnel`, `material`, `materialclass`), else a field of the job order named like the key.
 */
const fromJobOrder = (request: CounterRequest, key: SearchKeyConfig): string | undefined => {
  const name = key.name.toLowerCase()
  if (key.path === "jobid" || name === "job" || name === "joborder" || name === "jobid") return request.jobOrderId
  const requirement = Object.hasOwn(requirementPaths, name) ? requirementPaths[name] : undefined
  return (requirement === undefined ? undefined : asValue(at(request.jobOrder, requirement))) ?? asValue(at(request.jobOrder, key.name))
}

/** The journal, counter and search-key value a counter name stands for in this request, if any. */
const locate = (configs: ReadonlyArray<JournalConfig>, request: CounterRequest, counter: string) => {
  for (const config of configs) {
    const found = config.counters.find((c) => c.name === counter)
    if (found === undefined) continue
    const key = config.searchKeys.find((s) => s.name === found.searchKey)
    if (key === undefined) return undefined
    const value = fromResults(request.results, key) ?? fromJobOrder(request, key)
    return value === undefined ? undefined : { journal: config.name, value }
  }
  return undefined
}

/**
 * A counter the scope does not have, or whose search key has no value here, is left out (the
 * condition then fails the job naming it); a counter that cannot be read now, or a scope whose
 * journal configurations are not loaded yet, is `CounterUnavailable`, so the engine moves nothing
 * and tries again.
 */
export const makeJournalCounterSource = Effect.gen(function* () {
  const journal = yield* Journal
  // The station events' records still being written: a counter must count the event that led here.
  const inFlight = yield* Effect.serviceOption(JournalRecordsInFlight)
  return CounterSource.of({
    read: (request) =>
      Effect.gen(function* () {
        if (Option.isSome(inFlight)) yield* inFlight.value.settled(request.scope)
        // Configurations not read yet (the daemon is starting) hide every counter: unavailable, so the engine waits.
        const configs = yield* journal.journalsOf(request.scope).pipe(
          Effect.mapError((error) => new CounterUnavailable({ counter: request.counters.join(", "), message: `${error._tag}: ${error.message}` }))
        )
        const read = yield* Effect.forEach(
          request.counters,
          (counter) => {
            const where = locate(configs, request, counter)
            if (where === undefined) return Effect.succeed([])
            return journal.counter(request.scope, where.journal, counter, where.value).pipe(
              Effect.map((total) => [[counter, total] as const]),
              // Removed meanwhile, or a value no key can hold: the counter is not there.
              Effect.catchTags({ JournalNotFound: () => Effect.succeed([]), InvalidInput: () => Effect.succeed([]) }),
              Effect.mapError((error) => new CounterUnavailable({ counter, message: `${error._tag}: ${error.message}` }))
            )
          },
          { concurrency: "unbounded" }
        )
        return Object.fromEntries(read.flat())
      })
  })
})

/** {@link makeJournalCounterSource} as a layer; it needs the island's `Journal` (and waits for `JournalRecordsInFlight` when there is one). */
export const JournalCounterSource = Layer.effect(CounterSource, makeJournalCounterSource)
