import { Context, Effect, Fiber, Layer } from "effect"

/**
 * The journal records of station events that are still being written, by scope (the island
 * journals in the engine's event path without slowing a job). The station ingress
 * starts a record and lets the engine ingest the event meanwhile; the counter source waits for
 * the records in flight in its scope before it reads a counter, so a counter a transition reads
 * still counts the event that just arrived (the torque result that leads to it), while every
 * event whose transitions read no counter no longer waits for the journal's round trip.
 */
export interface JournalRecordsInFlightService {
  /**
   * Starts `record` (which must not fail: the journal logs its own failures) in the layer's
   * scope and returns its end: awaiting it waits for the record, whatever its outcome.
   */
  readonly start: (scope: string, record: Effect.Effect<void>) => Effect.Effect<Effect.Effect<void>>
  /** Waits for every record of the scope that is in flight now. */
  readonly settled: (scope: string) => Effect.Effect<void>
}

export class JournalRecordsInFlight extends Context.Service<JournalRecordsInFlight, JournalRecordsInFlightService>()("@microdcs/island-daemon/JournalRecordsInFlight") {
  /** Records still running when the layer closes are interrupted (and count as ended). */
  static readonly layer = Layer.effect(
    JournalRecordsInFlight,
    Effect.gen(function* () {
      const scope = yield* Effect.scope
      // Scopes are few and long-lived: their sets stay, empty, once their records ended.
      const inFlight = new Map<string, Set<Fiber.Fiber<void>>>()
      // The fibers' exits, not finalizers inside them: a fiber interrupted before it began (the
      // layer closing) runs none of its own code, but it ends, and its observers hear of it.
      const start = (scopeName: string, record: Effect.Effect<void>) =>
        Effect.gen(function* () {
          let records = inFlight.get(scopeName)
          if (records === undefined) inFlight.set(scopeName, (records = new Set()))
          const own = records
          const fiber = yield* Effect.forkIn(record, scope)
          own.add(fiber)
          fiber.addObserver(() => own.delete(fiber))
          return Effect.asVoid(Fiber.await(fiber))
        })
      const settled = (scopeName: string) =>
        Effect.suspend(() => {
          const records = inFlight.get(scopeName)
          return records === undefined || records.size === 0 ? Effect.void : Effect.forEach([...records], Fiber.await, { discard: true })
        })
      return JournalRecordsInFlight.of({ start, settled })
    })
  )
}
