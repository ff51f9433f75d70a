import { Effect, Option, Context, Layer } from "effect"
import { eventKeyAt } from "@microdcs/sfc"
import { SfcCorrelations, SfcStateDao } from "@microdcs/store"
import { CommandDispatch } from "./CommandDispatch.js"
import { type Applied, type ExecutionError, Executions } from "./Executions.js"

/** An event or reply from a station, as the CloudEvents binding (or the in-process station) sees it. */
export interface StationEvent {
  /** The CloudEvent subject up to the first `/`: the island scope. */
  readonly scope: string
  readonly source: string
  readonly id: string
  readonly type: string
  /** Set on replies to push commands. */
  readonly correlationId?: string | undefined
  /** The `jobid` extension attribute, when the station names the job. */
  readonly jobId?: string | undefined
  /**
   * The event's CloudEvent attributes by name, extensions among them: where a pull event's
   * correlation key may be (`CorrelationKey.Attribute`).
   */
  readonly attributes?: Readonly<Record<string, string>> | undefined
  readonly data?: unknown
  /** Set when the station reports a failure. */
  readonly error?: string | undefined
}

export type IngestOutcome =
  | { readonly _tag: "Applied"; readonly jobId: string }
  | { readonly _tag: "Duplicate"; readonly jobId: string }
  | { readonly _tag: "Ignored"; readonly reason: string }

/** How many waiting jobs an event by type tries when the oldest entry turns out to be stale. */
const WAITING_CANDIDATES = 3

const outcomeOf = (jobId: string, applied: Applied): IngestOutcome | undefined => {
  switch (applied._tag) {
    case "Written":
      return { _tag: "Applied", jobId }
    case "Duplicate":
      return { _tag: "Duplicate", jobId: applied.jobId ?? jobId }
    case "NoExecution":
      return undefined
    case "Unchanged":
      return undefined
  }
}

/** The services routing an event reads and writes through. */
interface IngestDeps {
  readonly correlations: SfcCorrelations["Service"]
  readonly states: SfcStateDao["Service"]
  readonly executions: Executions["Service"]
  readonly dispatch: CommandDispatch["Service"]
}

const applyTo = (deps: IngestDeps, jobId: string, event: StationEvent) =>
  deps.executions.apply(
    jobId,
    {
      type: "event",
      ...(event.correlationId !== undefined ? { correlationId: event.correlationId } : { eventType: event.type }),
      data: event.data ?? null,
      ...(event.error !== undefined ? { error: event.error } : {}),
      ...(event.attributes !== undefined ? { attributes: event.attributes } : {})
    },
    { source: event.source, id: event.id }
  )

/** The outcome of applying the event to a job; `reason` when no action of it took the event. */
const viaJob = (deps: IngestDeps, jobId: string, event: StationEvent, reason: string): Effect.Effect<IngestOutcome, ExecutionError> =>
  Effect.map(applyTo(deps, jobId, event), (applied) => outcomeOf(jobId, applied) ?? { _tag: "Ignored", reason })

/** A reply to a command this process sent finds its job in memory; any other reads the pointer. */
const viaCorrelation = (deps: IngestDeps, correlationId: string, event: StationEvent): Effect.Effect<IngestOutcome, ExecutionError> => {
  const known = deps.dispatch.jobOf(correlationId)
  if (known !== undefined) return viaJob(deps, known, event, "no action waits for this reply")
  return Effect.flatMap(deps.correlations.jobOf(correlationId), (pointer) =>
    Option.isNone(pointer)
      ? Effect.succeed<IngestOutcome>({ _tag: "Ignored", reason: "unknown correlation id" })
      : viaJob(deps, pointer.value, event, "no action waits for this reply")
  )
}

/** The first of the jobs that takes the event (a few are tried, when an index entry is stale). */
const firstTaking = (deps: IngestDeps, jobs: ReadonlyArray<{ readonly jobId: string }>, event: StationEvent) =>
  Effect.gen(function* () {
    for (const { jobId } of jobs) {
      const outcome = outcomeOf(jobId, yield* applyTo(deps, jobId, event))
      if (outcome) return outcome
    }
    return undefined
  })

/**
 * To the job whose keyed wait expects the key the event carries at one of its type's key
 * places (a lookup by value per place: no waiting job is scanned), else to the job that has
 * waited longest for the type among those that name no key.
 */
const viaWaiting = (deps: IngestDeps, event: StationEvent): Effect.Effect<IngestOutcome, ExecutionError> =>
  Effect.gen(function* () {
    const { scope, type: typeId } = event
    // Both reads go out together: one round trip.
    const [places, waiting] = yield* Effect.all([deps.states.keyPlaces(scope, typeId), deps.states.waiting(scope, typeId, WAITING_CANDIDATES)], { concurrency: 2 })
    const keys = keysOf(places, event)
    for (const key of keys) {
      const outcome = yield* firstTaking(deps, yield* deps.states.keyedWaiting(scope, { typeId, key }, WAITING_CANDIDATES), event)
      if (outcome) return outcome
    }
    const outcome = yield* firstTaking(deps, waiting, event)
    if (outcome) return outcome
    const reason = keys.length === 0 ? "no job waits for this event type" : `no job waits for this event's key (${keys.map((k) => `${k.place} = ${k.value}`).join(", ")})`
    return { _tag: "Ignored", reason } satisfies IngestOutcome
  })

/** The keys the event carries at the places its type's keyed waits read. */
const keysOf = (places: ReadonlyArray<string>, event: StationEvent) =>
  places.flatMap((place) => {
    const value = eventKeyAt(place, event)
    return value === undefined ? [] : [{ place, value }]
  })

/** Routes the event; `Ignored` may still be a duplicate, which `ingest` then finds out. */
const route = (deps: IngestDeps, event: StationEvent): Effect.Effect<IngestOutcome, ExecutionError> => {
  if (event.correlationId !== undefined) return viaCorrelation(deps, event.correlationId, event)
  if (event.jobId !== undefined) return viaJob(deps, event.jobId, event, "the job waits for no such event")
  return viaWaiting(deps, event)
}

const ingest = (deps: IngestDeps, event: StationEvent) =>
  Effect.flatMap(route(deps, event), (outcome) => {
    if (outcome._tag !== "Ignored") return Effect.succeed(outcome)
    // An event applied before is a duplicate even when the job moved on (or ended) since.
    // A write that would apply it again fails in the CAS (which checks the event record
    // first), so only an event that changed nothing needs this read.
    return Effect.flatMap(deps.states.eventApplied(event.scope, event.source, event.id), (applied) =>
      applied._tag === "Some"
        ? Effect.succeed<IngestOutcome>({ _tag: "Duplicate", jobId: applied.value })
        : Effect.as(
            Effect.logInfo("station event ignored").pipe(Effect.annotateLogs({ type: event.type, id: event.id, reason: outcome.reason })),
            outcome
          )
    )
  })

/**
 * Routes station events into executions: a reply by its correlation id, an event by the job it
 * names, else by the correlation key it carries to the job that expects it, else to the job that
 * has waited longest for its type. The applied
 * event is recorded in the same CAS, so a redelivered event is a no-op even after the state moved.
 */
export class SfcEvents extends Context.Service<SfcEvents>()("@microdcs/sfc/SfcEvents", {
  make: Effect.gen(function* () {
    const deps: IngestDeps = {
      correlations: yield* SfcCorrelations,
      states: yield* SfcStateDao,
      executions: yield* Executions,
      dispatch: yield* CommandDispatch
    }
    return { ingest: (event: StationEvent) => ingest(deps, event) } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
