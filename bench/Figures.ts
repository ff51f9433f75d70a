import { summarize, type Latency } from "./Measure.js"
import type { WindowFigures } from "./Window.js"

/** Every chain and every job order in the comparison is five steps long. */
export const STEPS = 5
/** Jobs (or chains) at once in the throughput run. */
export const JOBS = Number(process.env["BENCH_JOBS"] ?? 200)
/** Jobs run one after another for the unloaded latency. */
export const SINGLE_JOBS = Number(process.env["BENCH_SINGLE_JOBS"] ?? 40)

/** One round of one system (the SFC engine or BullMQ): its figures per step. */
export interface SystemRound {
  readonly stepsPerSecond: number
  /** Event to next dispatch (BullMQ: step gap), one job at a time. */
  readonly single: Latency
  /** The same with JOBS at once. */
  readonly loaded: Latency
  /** Commands sent per step by the process running the engine or workers. */
  readonly sentPerStep: number
  /** Commands the server executed per step, those inside Lua scripts included. */
  readonly executedPerStep: number
  readonly serverCpuMicrosPerStep: number
  readonly nodeCpuMicrosPerStep: number
  /** Server-executed calls per step by command, largest first. */
  readonly byCommand: ReadonlyArray<readonly [name: string, perStep: number]>
  /** Sent commands per step by command, largest first. */
  readonly sentByCommand: ReadonlyArray<readonly [name: string, perStep: number]>
}

/** The figures of a round from its throughput window and the gaps of both runs. */
export const systemRound = (
  steps: number,
  window: WindowFigures,
  singleGaps: ReadonlyArray<number>,
  loadedGaps: ReadonlyArray<number>
): SystemRound => ({
  stepsPerSecond: steps / window.seconds,
  single: summarize("one job at a time", singleGaps),
  loaded: summarize(`${JOBS} at once`, loadedGaps),
  sentPerStep: window.sent / steps,
  executedPerStep: window.server.commands / steps,
  serverCpuMicrosPerStep: window.server.cpuMicros / steps,
  nodeCpuMicrosPerStep: window.nodeCpuMicros / steps,
  byCommand: window.server.byCommand.map(([name, calls]) => [name, calls / steps] as const),
  sentByCommand: window.sentByCommand.map(([name, calls]) => [name, calls / steps] as const)
})
