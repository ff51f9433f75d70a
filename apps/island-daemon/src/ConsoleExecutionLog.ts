import { Effect, Metric, Option } from "effect"
import { executionLogDroppedCounter, ExecutionLogWriter } from "@microdcs/sfc-runtime"

/**
 * The execution log writer of this daemon as the island page shows it: the writes dropped
 * (`microdcs_execution_log_dropped_total`, what `/metrics` shows) and the writer's queue and
 * batches. The log is best effort: a drop loses log nodes, never a job's state, so it is shown
 * here rather than only warned about. `writer` is null in a daemon that runs no engine.
 */
export const executionLogFigures = Effect.gen(function* () {
  const dropped = Number((yield* Metric.value(executionLogDroppedCounter)).count)
  const writer = Option.map(yield* Effect.serviceOption(ExecutionLogWriter), (w) => w.stats())
  if (Option.isNone(writer) || !writer.value.installed) return { dropped, writer: null }
  const { queued, queueSize, written, batches, lastBatchMs, slowestBatchMs, removed, retentionFailures } = writer.value
  return {
    dropped,
    writer: { queued, queueSize, written, batches, lastBatchMs: Math.round(lastBatchMs), slowestBatchMs: Math.round(slowestBatchMs), removed, retentionFailures }
  }
})

export type ExecutionLogFigures = Effect.Success<typeof executionLogFigures>
