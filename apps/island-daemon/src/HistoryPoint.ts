// Its own file, free of imports, so the console (bundled for the browser) reads the same type.
/** One step of a window: its start, the rates per minute and the run-time percentiles in ms (null without completed jobs). */
export interface HistoryPoint {
  readonly at: number
  readonly started: number
  readonly completed: number
  readonly aborted: number
  readonly p50: number | null
  readonly p95: number | null
  readonly p99: number | null
}
