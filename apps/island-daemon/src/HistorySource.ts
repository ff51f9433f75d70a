import { Context, Data, Effect } from "effect"
import { type HistoryPoint, type JobHistory, windowEnding } from "./JobHistory.js"

/** The history could not be read (the Prometheus server did not answer, or answered nonsense). */
export class HistoryUnavailable extends Data.TaggedError("HistoryUnavailable")<{ readonly message: string }> {}

export interface HistoryQuery {
  /** One scope, or the whole island. */
  readonly scope: string | undefined
  readonly windowMs: number
  readonly stepMs: number
}

export interface HistoryAnswer {
  /** Where the points come from: this daemon's memory or the Prometheus server. */
  readonly source: "daemon" | "prometheus"
  readonly from: number
  readonly to: number
  readonly stepMs: number
  readonly points: ReadonlyArray<HistoryPoint>
  /** Scopes the daemon's history does not keep (past its cap of 64): their points are empty. */
  readonly scopesLeftOut: ReadonlyArray<string>
}

/**
 * Where the console's history comes from: the daemon's own 24-hour series (JobHistory.ts), or,
 * when `HISTORY_PROMETHEUS_URL` is set, the Prometheus server that scrapes the daemons
 * (PrometheusHistory.ts), which keeps more than the change streams do.
 */
export class HistorySource extends Context.Service<
  HistorySource,
  {
    readonly source: "daemon" | "prometheus"
    readonly points: (query: HistoryQuery) => Effect.Effect<HistoryAnswer, HistoryUnavailable>
  }
>()("@microdcs/island-daemon/HistorySource") {}

/** The history of this daemon's memory. */
export const daemonHistory = (history: JobHistory): HistorySource["Service"] => ({
  source: "daemon",
  points: (query) =>
    Effect.sync(() => {
      const window = windowEnding(Date.now(), query.windowMs, query.stepMs)
      return { source: "daemon", ...window, points: history.points(query.scope, window), scopesLeftOut: history.scopesLeftOut() }
    })
})
