import { Effect, Option, Result } from "effect"
import type { StoredDocument } from "@microdcs/store"
import type { PendingInput } from "./ApplyInbox.js"
import type { ExecutionError } from "./ApplyOutcome.js"
import { type ExecutionDeps, type LoadedExecution, remember } from "./ExecutionStates.js"

/** What a tick knows of a job's state before planning. */
export type JobLoad =
  | { readonly _tag: "Loaded"; readonly loaded: LoadedExecution; readonly fromCache: boolean }
  | { readonly _tag: "Missing" }
  | { readonly _tag: "Failed"; readonly error: ExecutionError }

type ReadResult = Result.Result<Option.Option<StoredDocument>, ExecutionError>

const decodeOne = (deps: ExecutionDeps, jobId: string, read: ReadResult): Effect.Effect<JobLoad> => {
  if (Result.isFailure(read)) return Effect.succeed({ _tag: "Failed", error: read.failure })
  if (Option.isNone(read.success)) {
    deps.cache.delete(jobId)
    return Effect.succeed({ _tag: "Missing" })
  }
  const { doc, version } = read.success.value
  return deps.snapshots.decodeState(doc).pipe(
    Effect.map((state): JobLoad => {
      const loaded = { state, version }
      remember(deps, jobId, loaded)
      return { _tag: "Loaded", loaded, fromCache: false }
    }),
    Effect.catch((error) => Effect.succeed<JobLoad>({ _tag: "Failed", error }))
  )
}

/**
 * The states of a tick's jobs: from the cache where this process wrote them last, the rest in
 * one pipelined read. A job an input asks to read afresh (after a conflict) skips the cache.
 */
export const loadJobs = (deps: ExecutionDeps, groups: ReadonlyMap<string, ReadonlyArray<PendingInput>>): Effect.Effect<Map<string, JobLoad>> => {
  const loads = new Map<string, JobLoad>()
  const toRead: Array<string> = []
  for (const [jobId, items] of groups) {
    const cached = items.some((item) => item.fresh) ? undefined : deps.cache.get(jobId)
    if (cached !== undefined) loads.set(jobId, { _tag: "Loaded", loaded: cached, fromCache: true })
    // A create needs no read: its write is create-only, and an existing state refuses it.
    else if (items[0]!.create !== undefined) loads.set(jobId, { _tag: "Missing" })
    else toRead.push(jobId)
  }
  if (toRead.length === 0) return Effect.succeed(loads)
  return deps.states.getMany(toRead).pipe(
    Effect.flatMap((reads) =>
      Effect.forEach(reads, (read, i) => Effect.map(decodeOne(deps, toRead[i]!, read), (load) => void loads.set(toRead[i]!, load)), { discard: true })
    ),
    Effect.catch((error) => Effect.sync(() => toRead.forEach((jobId) => loads.set(jobId, { _tag: "Failed", error })))),
    Effect.as(loads)
  )
}
