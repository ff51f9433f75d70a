import { Cause, Duration, Effect, Layer, Schedule } from "effect"
import type { CloudEvent } from "@microdcs/cloudevents-mqtt"
import { JobControlIngress, type JobControlIngressOptions, MqttStation, type StationIngressOptions } from "@microdcs/island-mqtt"
import { Journal, JournalOptions, type JournalEvent } from "@microdcs/journal"
import type { DaemonConfig } from "./DaemonConfig.js"
import { journalConfigRequests } from "./JournalConfigRequests.js"
import { eventConditions } from "@microdcs/sfc"
import { exportUnreadableJournals } from "./JournalMetrics.js"
import type { Metrics } from "./Metrics.js"
import { JournalRecordsInFlight, type JournalRecordsInFlightService } from "./JournalRecordsInFlight.js"

/**
 * The journal in the daemon: the `Journal` service over the island's Valkey, its
 * configurations loaded at start and reloaded when `nudge:journal` names a scope, the cache
 * warmed, and, with the sweep role, the expiry sweep on a timer (several daemons may sweep at
 * once: each batch re-checks what it removes).
 */

/** A record that takes longer than this is given up (logged and counted): the event still goes to the engine. */
const RECORD_TIMEOUT = Duration.seconds(2)

/** The journal service with the daemon's settings; recipe conditions are the language of a counter's `when`. */
export const journalServices = (config: DaemonConfig) =>
  Journal.Default.pipe(Layer.provide(JournalOptions.layer({ cacheBytes: config.journal.cacheBytes, conditions: eventConditions })))

/** A CloudEvent as the journal records it: its attributes, the extensions among them (`jobid`), and `data`. */
export const journalEventOf = (event: CloudEvent): JournalEvent => ({
  ...event.extensions,
  specversion: event.specversion,
  id: event.id,
  source: event.source,
  type: event.type,
  ...(event.time !== undefined ? { time: event.time } : {}),
  ...(event.subject !== undefined ? { subject: event.subject } : {}),
  ...(event.datacontenttype !== undefined ? { datacontenttype: event.datacontenttype } : {}),
  ...(event.dataschema !== undefined ? { dataschema: event.dataschema } : {}),
  ...(event.data !== undefined ? { data: event.data } : {})
})

const failureText = (cause: Cause.Cause<unknown>): string => {
  const error = Cause.squash(cause) as { _tag?: unknown; message?: unknown }
  return typeof error === "object" && error !== null ? `${String(error._tag ?? "Error")}: ${String(error.message ?? "")}` : String(error)
}

/**
 * The station ingress hook: journals the event in every journal of its scope whose types name
 * it. The record is started here and runs while the engine ingests the event; the ingress
 * acknowledges the message once both are done, and the counter source waits for the records in
 * flight before it reads (see JournalRecordsInFlight), so a counter the next transition reads
 * counts it. Without `inFlight` the record is awaited before the ingest. A failure or a slow
 * store never reaches the engine's path: it is logged and counted, and the event goes on. So is
 * a scope whose configurations are not loaded: whether a journal names the event cannot be told
 * then, and saying nothing would pass it off as an event no journal wants.
 */
export const journalStationEvents =
  (journal: Journal["Service"], metrics: Metrics, inFlight?: JournalRecordsInFlightService) =>
  (event: CloudEvent, scope: string): Effect.Effect<Effect.Effect<void> | void> =>
    // Most events are of no journal: those cost a look at the configurations in memory, no timer.
    Effect.matchEffect(journal.journalsOf(scope), {
      onFailure: (notLoaded) => notJournaled(metrics, event, scope, `${notLoaded._tag}: ${notLoaded.message}`),
      onSuccess: (configs) => {
        if (!configs.some((c) => c.types.includes(event.type))) return Effect.void
        const record = recordEvent(journal, metrics, event, scope)
        return inFlight === undefined ? record : inFlight.start(scope, record)
      }
    })

/** A station event the journal did not take: counted, and a warning that says why; it goes to the engine all the same. */
const notJournaled = (metrics: Metrics, event: CloudEvent, scope: string, error: string) =>
  Effect.sync(() => metrics.recordJournal("record", "failed")).pipe(
    Effect.andThen(Effect.logWarning("station event not journaled; it goes to the engine all the same")),
    Effect.annotateLogs({ type: event.type, id: event.id, scope, error })
  )

const recordEvent = (journal: Journal["Service"], metrics: Metrics, event: CloudEvent, scope: string) =>
  journal.record(journalEventOf(event), { scope }).pipe(
    Effect.timeoutOrElse({ duration: RECORD_TIMEOUT, orElse: () => Effect.fail({ _tag: "Timeout", message: `no answer within ${Duration.format(RECORD_TIMEOUT)}` }) }),
    Effect.flatMap((recorded) => Effect.sync(() => recorded.forEach((r) => metrics.recordJournal("record", r.status)))),
    Effect.catchCause((cause) => (Cause.hasInterruptsOnly(cause) ? Effect.void : notJournaled(metrics, event, scope, failureText(cause))))
  )

/** One sweep, its figures counted; a failure is logged and counted, and the next round tries again. */
const sweepOnce = (journal: Journal["Service"], metrics: Metrics) =>
  journal.sweep().pipe(
    Effect.tap((summary) =>
      Effect.sync(() => {
        if (summary.entriesRemoved > 0) metrics.recordJournal("sweep", "removed", summary.entriesRemoved)
        if (summary.bucketsSubtracted > 0) metrics.recordJournal("sweep", "subtracted", summary.bucketsSubtracted)
      })
    ),
    Effect.catchCause((cause) =>
      Cause.hasInterruptsOnly(cause)
        ? Effect.failCause(cause)
        : Effect.sync(() => metrics.recordJournal("sweep", "failed")).pipe(
            Effect.andThen(Effect.logWarning("journal sweep failed; trying again at the next round")),
            Effect.annotateLogs({ error: failureText(cause) })
          )
    )
  )

/**
 * Keeps the journal running for as long as the layer lives: configurations loaded now and
 * reloaded on `nudge:journal` (everything again after a reconnect), the cache warmed in the
 * background, and with `sweep` the expiry sweep every `JOURNAL_SWEEP_INTERVAL_MS`.
 */
export const journalRunning = (config: DaemonConfig, metrics: Metrics) =>
  Layer.effectDiscard(
    Effect.gen(function* () {
      const journal = yield* Journal
      // A journal key of another type must not keep the island from starting: logged, counted, and
      // until the next nudge or reconnect reloads them, station events count as not journaled.
      yield* journal.watch.pipe(
        Effect.catch((error) =>
          Effect.sync(() => metrics.recordJournal("reload", "failed")).pipe(
            Effect.andThen(Effect.logError("journal configurations not loaded; nothing is journaled until they reload")),
            Effect.annotateLogs({ error: `${error._tag}: ${error.message}` })
          )
        )
      )
      for (const config of yield* journal.unreadable()) {
        yield* Effect.logWarning("stored journal configuration not readable; it is not journaled").pipe(
          Effect.annotateLogs({ scope: config.scope, journal: config.journal, problems: config.problems.join("; ") })
        )
      }
      yield* exportUnreadableJournals(metrics, journal)
      yield* journal.warm.pipe(
        Effect.tap((warmed) => Effect.logDebug("journal cache warmed").pipe(Effect.annotateLogs({ ...warmed }))),
        Effect.catchCause((cause) => Effect.logWarning("journal cache not warmed").pipe(Effect.annotateLogs({ error: failureText(cause) }))),
        Effect.forkScoped
      )
      if (config.roles.has("sweep")) {
        yield* sweepOnce(journal, metrics).pipe(
          Effect.delay(Duration.millis(config.journal.sweepIntervalMs)),
          Effect.repeat(Schedule.forever),
          Effect.forkScoped
        )
      }
    })
  )

/**
 * The engine's station side over MQTT, every station event and reply journaled while the engine
 * ingests it (acknowledged once both are done); the counter source reads after the records in flight.
 * It subscribes only once the journal's first load is done ({@link journalRunning} runs it beside
 * this layer): the events a persistent session kept while the daemon was away arrive right after
 * the connection, and each must find the configurations that say whether it is journaled. A
 * failed load (logged there) does not keep the engine from starting.
 */
export const journaledMqttStation = (metrics: Metrics, options: StationIngressOptions) =>
  Layer.unwrap(
    Effect.gen(function* () {
      const journal = yield* Journal
      const inFlight = yield* JournalRecordsInFlight
      yield* Effect.ignore(journal.whenLoaded)
      return MqttStation({ ...options, onStationEvent: journalStationEvents(journal, metrics, inFlight) })
    })
  )

/** The job control ingress that also takes the journal's configuration event (`...config.journal.v1`). */
export const journalingJobControlIngress = (metrics: Metrics, options: JobControlIngressOptions) =>
  Layer.unwrap(Effect.map(Journal, (journal) => JobControlIngress({ ...options, extraRequests: journalConfigRequests(journal, metrics) })))
