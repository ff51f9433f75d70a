import { Effect, LogLevel, References } from "effect"
import { decodeOrigin } from "@microdcs/job-state"
import type { PollerEntry } from "@microdcs/poller"
import type { EngineOptions } from "./EngineOptions.js"
import { Executions } from "./Executions.js"
import { followHold, followOrder } from "./FollowOrder.js"
import { startJob } from "./StartJob.js"

/** MES methods the engine follows, and what each does to a running execution. */
const followed: Readonly<Record<string, "start" | "remove" | "hold" | "stop" | "abort" | "update">> = {
  Start: "start",
  StoreAndStart: "start",
  Update: "update",
  Pause: "hold",
  Resume: "hold",
  Stop: "stop",
  Abort: "abort",
  Clear: "remove",
  Cancel: "remove"
}

/** The job and what the engine does for a change entry, or `undefined` for one it does not follow. */
export const followedChange = (fields: Readonly<Record<string, string>>) => {
  if (fields["kind"] !== "joborder") return undefined
  const jobId = fields["id"]
  const change = fields["change"]
  if (jobId === undefined || change === undefined) return undefined
  const action = followed[change]
  return action === undefined ? undefined : { jobId, action }
}


/**
 * An Update of the job order: the execution (when there is one) takes the job order's fields its
 * conditions read (`order.*`, v1.1.0) and evaluates a waiting step again. The job order state
 * machine takes an Update only before the job runs, so this is an update that landed around the
 * start: one that finds no execution yet is brought by the start itself (`startFollows`).
 */
const followUpdate = (jobId: string) => followOrder(jobId)

/**
 * Handles one entry of `changes:{scope}` read through the engine's own group: the engine follows
 * the job order. Entries of other kinds or methods are acknowledged and ignored.
 */
export const handleChangeEntry = (options: EngineOptions) => (entry: PollerEntry) =>
  Effect.gen(function* () {
    const followedEntry = followedChange(entry.fields)
    if (followedEntry === undefined) return
    const { jobId, action } = followedEntry
    const executions = yield* Executions
    if (action === "start") {
      const outcome = yield* startJob(jobId, options)
      // Once per job: the line (and its annotation) only when debug lines are wanted.
      if (outcome === "started" && LogLevel.isGreaterThanOrEqualTo("Debug", yield* References.MinimumLogLevel)) {
        yield* Effect.logDebug("job started").pipe(Effect.annotateLogs({ jobId }))
      }
      return
    }
    if (action === "remove") {
      yield* executions.remove(jobId)
      return
    }
    if (action === "hold") return yield* followHold(jobId)
    if (action === "update") return yield* followUpdate(jobId)
    // Who stopped or aborted it: the entry's origin (an entry written before origins has none).
    yield* executions.apply(jobId, { type: action, origin: decodeOrigin(entry.fields["origin"]) })
  })
