import { Context, Data, type Effect } from "effect"

/**
 * What the engine asks when the transitions it is about to evaluate name counters
 * (`counter.nok_torque_1h < 3`). One request per evaluation that needs counters;
 * a recipe without counters never reaches the source.
 */
export interface CounterRequest {
  readonly scope: string
  readonly jobOrderId: string
  /** The step (or branch) whose outgoing transitions are evaluated. */
  readonly source: string
  /** The counter names those transitions read, each once, in the order they appear. */
  readonly counters: ReadonlyArray<string>
  /**
   * The results the transitions are evaluated against: action name → result, in recipe order
   * (the first place to find a counter's search-key value).
   */
  readonly results: Readonly<Record<string, unknown>>
  /**
   * The job order as the MES sent it (the `jobOrder` of the stored record, e.g. its equipment
   * requirements): where a search-key value comes from when the results have none. `undefined`
   * when it cannot be read.
   */
  readonly jobOrder: unknown
}

/**
 * The counters could not be read now (Valkey down, a timeout). The engine moves nothing: the
 * input stays pending and is retried, so a job never takes a transition on a guessed value.
 */
export class CounterUnavailable extends Data.TaggedError("CounterUnavailable")<{
  readonly message: string
  readonly counter?: string | undefined
}> {}

export interface CounterSourceService {
  /**
   * The current value of each requested counter. A counter the source does not know (no such
   * counter configured, no search-key value found) is left out: the condition naming it is then an
   * evaluation error and the job fails with a message that names the counter.
   */
  readonly read: (request: CounterRequest) => Effect.Effect<Readonly<Record<string, number>>, CounterUnavailable>
}

/**
 * Where the engine reads the counters recipe conditions name. Optional: an island that provides
 * none runs recipes without counters as before, and a job whose transition names a counter fails
 * with "no counter source is configured". The island daemon provides one backed by the journal.
 */
export class CounterSource extends Context.Service<CounterSource, CounterSourceService>()("@microdcs/sfc/CounterSource") {}
