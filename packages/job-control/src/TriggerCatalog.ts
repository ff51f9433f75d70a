import { Context, Duration, Effect, Layer, Queue, Ref, Schedule, Semaphore } from "effect"
import { type ConnectionError, Nudges, TRIGGER_NUDGE_KIND, TriggerStore, type WrongType } from "@microdcs/store"
import { type CompiledTrigger, compileTrigger, matchingTriggers, type TriggerEvent } from "./TriggerMatch.js"
import type { TriggerRow } from "@microdcs/store"

export interface TriggerCatalogOptions {
  /** The fallback reload when nudges and change events were missed; default 30 s (TRIGGER_REFRESH_INTERVAL_MS in the daemon). */
  readonly refreshIntervalMs?: number | undefined
  /** The name of the nudge connection; default `triggers`. */
  readonly connectionName?: string | undefined
}

export const DEFAULT_TRIGGER_REFRESH_MS = 30_000

export interface TriggerCatalogService {
  /** The enabled and disabled triggers held now, by id. */
  readonly triggers: Effect.Effect<ReadonlyArray<TriggerRow>>
  /** The triggers an event fires now (enabled ones only); no store read. */
  readonly match: (event: TriggerEvent) => Effect.Effect<ReadonlyArray<TriggerRow>>
  /** Asks for a reload soon (a nudge, a `dag.triggers.changed` event); never waits, never fails. */
  readonly changed: Effect.Effect<void>
  /** Reloads now and returns when done; a store failure keeps the triggers held and is logged. */
  readonly reload: Effect.Effect<void>
}

/**
 * Every trigger, held in full in memory by every instance: never queried
 * per event. Loaded at start (a store failure then fails the layer, so the daemon retries),
 * reloaded on the nudge `nudge:triggers`, on request (`changed`, for the MQTT change event)
 * and on a periodic refresh, the fallback for a lost nudge. Reloads run one at a time; requests
 * that arrive during one are folded into the next.
 */
export class TriggerCatalog extends Context.Service<TriggerCatalog, TriggerCatalogService>()("@microdcs/job-control/TriggerCatalog") {
  static readonly layer = (options: TriggerCatalogOptions = {}) => Layer.effect(TriggerCatalog, makeTriggerCatalog(options))
}

const logged = (what: string) => (error: WrongType | ConnectionError) =>
  Effect.logWarning(`triggers not reloaded (${what}); the ones held stay in use`).pipe(Effect.annotateLogs({ error: `${error._tag}: ${error.message}` }))

export const makeTriggerCatalog = (options: TriggerCatalogOptions = {}) =>
  Effect.gen(function* () {
    const store = yield* TriggerStore
    const nudges = yield* Nudges
    const held = yield* Ref.make<ReadonlyArray<CompiledTrigger>>([])
    const one = yield* Semaphore.make(1)

    const load = Effect.gen(function* () {
      const { triggers, unreadable } = yield* store.list
      for (const bad of unreadable) {
        yield* Effect.logWarning("trigger row unreadable; left out").pipe(Effect.annotateLogs({ trigger: bad.id, problems: bad.problems.join("; ") }))
      }
      yield* Ref.set(held, triggers.map(compileTrigger))
    }).pipe(one.withPermits(1))

    // Subscribed before the first load, so an edit made while loading is nudged, not missed.
    const wake = yield* Queue.sliding<void>(1)
    yield* nudges.listen(TRIGGER_NUDGE_KIND, options.connectionName ?? "triggers", {
      onNudge: () => void Queue.offerUnsafe(wake, undefined),
      onReconnect: () => void Queue.offerUnsafe(wake, undefined)
    })
    yield* load
    yield* Queue.take(wake).pipe(
      Effect.andThen(load.pipe(Effect.catch(logged("nudge")))),
      Effect.forever,
      Effect.forkScoped
    )
    const every = Duration.millis(options.refreshIntervalMs ?? DEFAULT_TRIGGER_REFRESH_MS)
    yield* load.pipe(Effect.catch(logged("refresh")), Effect.repeat(Schedule.spaced(every)), Effect.delay(every), Effect.forkScoped)

    const triggers = Effect.map(Ref.get(held), (all) => all.map((t) => t.row))
    return {
      triggers,
      match: (event: TriggerEvent) => Effect.map(Ref.get(held), (all) => matchingTriggers(all, event)),
      changed: Queue.offer(wake, undefined).pipe(Effect.asVoid),
      reload: load.pipe(Effect.catch(logged("reload")))
    } satisfies TriggerCatalogService
  })
