import type { StepTime } from "./StepLog.js"

/** What the parent tells an engine child (in `BENCH_ENGINE_CHILD`, JSON). */
export interface EngineChildConfig {
  readonly url: string
  readonly prefix: string
  readonly consumer: string
}

/** Parent to child: start measuring, stop and report (then the child shuts down and exits). */
export type ToChild = { readonly type: "start" } | { readonly type: "stop" }

/** Child to parent. */
export type FromChild =
  | { readonly type: "ready" }
  | {
      readonly type: "report"
      /** `process.cpuUsage()` user + system between start and stop, µs. */
      readonly cpuMicros: number
      /** Commands the child sent between start and stop. */
      readonly sent: number
      /** The steps its station answered. */
      readonly steps: ReadonlyArray<StepTime>
    }
