import { Effect, Layer } from "effect"
import { JobControl, type JobControlRequest } from "@microdcs/job-control"
import { statusNames } from "@microdcs/job-state"
import { SfcEvents, type StationEvent } from "@microdcs/sfc"
import type { Metrics } from "./Metrics.js"

/**
 * The two places where the daemon processes an MQTT message, wrapped to count each message by
 * type and outcome and time it (island.md §4 metrics). The bindings in @microdcs/island-mqtt know
 * nothing of Prometheus; wrapping the services they call keeps it so.
 */

const timed = <A, E, R>(metrics: Metrics, kind: string, type: string, outcome: (a: A) => string, effect: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => {
    const started = performance.now()
    const record = (label: string) => Effect.sync(() => metrics.recordMessage(kind, type, label, (performance.now() - started) / 1000))
    return effect.pipe(
      Effect.tap((a) => record(outcome(a))),
      Effect.tapError((e) => record(typeof e === "object" && e !== null && "_tag" in e ? String(e._tag) : "error"))
    )
  })

/** `JobControl` recording each request: the outcome is the reply's ReturnStatus name, or the failure. */
export const instrumentedJobControl = (metrics: Metrics) =>
  Layer.effect(
    JobControl,
    Effect.map(JobControl, (real) =>
      JobControl.make({
        handle: (request: JobControlRequest) =>
          timed(metrics, "jobcontrol", request.type, (result) => statusNames(result.reply.status).join("|") || String(result.reply.status), real.handle(request))
      })
    )
  )

/** `SfcEvents` recording each station reply or event: the outcome is Applied, Duplicate or Ignored, or the failure. */
export const instrumentedSfcEvents = (metrics: Metrics) =>
  Layer.effect(
    SfcEvents,
    Effect.map(SfcEvents, (real) =>
      SfcEvents.make({
        ingest: (event: StationEvent) => timed(metrics, "station", event.type, (outcome) => outcome._tag, real.ingest(event))
      })
    )
  )
