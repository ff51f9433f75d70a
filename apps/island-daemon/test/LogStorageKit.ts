import { Effect } from "effect"
import { sampleExecution, sampleNode } from "@microdcs/execution-log/testing"
import type { ExecutionRecord } from "@microdcs/execution-log"
import type { DaemonProcess } from "./DaemonProcess.js"
import { SCOPE } from "./IslandKit.js"

/** What the daemon tests of the execution log's storage share. Not a test file itself. */

/** A closed execution of the axle job in the test scope; `more` overrides any field. */
export const execution = (executionId: string, lastSeq: number, more: Partial<ExecutionRecord> = {}): ExecutionRecord =>
  sampleExecution(executionId, lastSeq, { jobId: "jo-log-1", scope: SCOPE, workMasterId: "wm-axle-v1", recipeDigest: "d".repeat(64), closedAt: 1_700_000_001_000, ...more })

export const node = sampleNode

/** One series' value in Prometheus text, 0 when absent. */
const sample = (text: string, series: string): number => {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `))
  return line === undefined ? 0 : Number(line.slice(series.length + 1))
}

/** One series of the daemon's `/metrics`. */
export const metric = (d: DaemonProcess, series: string) => Effect.promise(async () => sample((await d.get("/metrics")).text, series))

export const COMMITTED = "microdcs_execution_log_committed_total"
