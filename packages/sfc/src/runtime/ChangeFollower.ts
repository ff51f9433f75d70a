import { Effect } from "effect"
import type { PollerEntry } from "@microdcs/poller"
import type { EngineInput } from "../engine/Engine.js"
import type { EngineOptions } from "./EngineOptions.js"
import { Executions } from "./Executions.js"
import { startJob } from "./StartJob.js"

/** MES methods the engine follows, and what each does to a running execution (sfc.md §3). */
const followed: Readonly<Record<string, EngineInput | "start" | "remove">> = {
  Start: "start",
  StoreAndStart: "start",
  Pause: { type: "pause" },
  Resume: { type: "resume" },
  Stop: { type: "stop" },
  Abort: { type: "abort", reason: "aborted by the MES" },
  Clear: "remove",
  Cancel: "remove"
}

/**
 * Handles one entry of `changes:{scope}` read through the engine's own group: the engine follows
 * the job order. Entries of other kinds or methods are acknowledged and ignored.
 */
export const handleChangeEntry = (options: EngineOptions) => (entry: PollerEntry) =>
  Effect.gen(function* () {
    if (entry.fields["kind"] !== "joborder") return
    const jobId = entry.fields["id"]
    const change = entry.fields["change"]
    if (jobId === undefined || change === undefined) return
    const action = followed[change]
    if (action === undefined) return
    const executions = yield* Executions
    if (action === "start") {
      const outcome = yield* startJob(jobId, options.maxAttempts)
      if (outcome === "started") yield* Effect.logDebug("job started").pipe(Effect.annotateLogs({ jobId }))
      return
    }
    if (action === "remove") {
      yield* executions.remove(jobId)
      return
    }
    yield* executions.apply(jobId, action)
  })
