import { Effect, Option, Result } from "effect"
import type { ActionRun, ExecutionState } from "@microdcs/sfc"
import { JobResponseFailures, SfcStateDao } from "@microdcs/store"
import { afterCursor, consoleLink, type Incident, type SourceRequest, sourceCursor } from "./ConsoleIncident.js"

/**
 * The job sources of the incident view: aborted jobs (from the failed set of job responses, an
 * index), and from the engine states of the scope's active jobs (read up to
 * {@link ACTIVE_STATES_READ} per scope) failed actions of running jobs and the commands a Pause
 * held back (sent again on Resume).
 */

/** Engine states read per scope for failed actions: the bound that keeps a page's cost fixed. */
export const ACTIVE_STATES_READ = 200

/** The text of a job response's `Description` (one LocalizedText or a list of them), or "". */
export const descriptionOf = (doc: string): string => {
  try {
    const parsed = JSON.parse(doc) as { readonly Description?: unknown }
    const texts = [parsed.Description].flat().flatMap((d) => (typeof d === "object" && d !== null && typeof (d as { Text?: unknown }).Text === "string" ? [(d as { Text: string }).Text] : []))
    return texts.join("; ")
  } catch {
    return ""
  }
}

const abortedOf = (scope: string, at: number, response: { readonly id: string; readonly orderId: string; readonly doc: string }): Incident => ({
  kind: "aborted-job",
  scope,
  id: response.id,
  at,
  title: `Job ${response.orderId} aborted`,
  reason: descriptionOf(response.doc) || "no reason recorded",
  action: { kind: "clear", target: { scope, jobId: response.orderId }, label: "Clear the aborted job order" },
  link: consoleLink.job(response.orderId)
})

/** The newest aborted jobs of every scope asked, each scope's page from the failed set. */
export const abortedJobs = (request: SourceRequest) =>
  Effect.gen(function* () {
    const failures = yield* JobResponseFailures
    const pages = yield* Effect.forEach(request.scopes, (scope) =>
      failures.page(scope, { limit: request.limit, before: sourceCursor(request.cursor, "aborted-job", scope) }).pipe(
        Effect.map((page) => page.map(({ at, response }) => abortedOf(scope, at, response)))
      ),
      { concurrency: 8 }
    )
    return pages.flat()
  })

/**
 * An action that failed: waiting out its back-off after a failed attempt (pending, sent before),
 * on a later attempt, or failed for good with its OnError target taken (the job still runs).
 */
const failedRun = (run: ActionRun): boolean =>
  run.state === "failed" || (run.retryAttempt ?? 1) > 1 || (run.state === "pending" && run.attempts > 0)

/** The state records a failed attempt's error only once the action fails for good; before, it is in the job's log. */
const failureReason = (run: ActionRun): string =>
  run.error ?? `attempt ${run.retryAttempt ?? 1} failed${run.state === "pending" ? ", the next one waits its back-off" : ", trying again"}; the error is in the job's log`

const actionIncident = (state: Pick<ExecutionState, "jobId" | "scope" | "startedAt">, run: ActionRun): Incident => ({
  kind: "failed-action",
  scope: state.scope,
  id: `${state.jobId}/${run.action}/${run.visit}`,
  // The state keeps no failure time: the action's start (its log node opened), else its wait's, else the job's.
  at: run.logNode?.at ?? run.waitSince ?? state.startedAt,
  title: `Action ${run.action} of job ${state.jobId} ${run.state === "failed" ? "failed" : "failed, retrying"}`,
  reason: failureReason(run),
  action: { kind: "retry-action", target: { scope: state.scope, jobId: state.jobId, action: run.action, visit: run.visit }, label: "Retry the action" },
  link: consoleLink.job(state.jobId)
})

type EngineState = Pick<ExecutionState, "jobId" | "scope" | "startedAt" | "actions" | "status" | "pausedAt" | "heldCommands">

/** A command a Pause held back: the station has not seen it; Resume sends it. */
const heldCommandIncidents = (state: EngineState): ReadonlyArray<Incident> =>
  (state.heldCommands ?? []).map((command) => ({
    kind: "held-request",
    scope: state.scope,
    id: `${state.jobId}/${command.correlationId}`,
    at: state.pausedAt ?? state.startedAt,
    title: `Command ${command.action} of paused job ${state.jobId} held back`,
    reason: `the job was paused before it went out (attempt ${command.attempt}); Resume sends it`,
    action: { kind: "resume", target: { scope: state.scope, jobId: state.jobId }, label: "Resume the job" },
    link: consoleLink.job(state.jobId)
  }))

/** One scope's failed actions and held commands, from at most {@link ACTIVE_STATES_READ} engine states. */
const scopeEngineIncidents = (scope: string) =>
  Effect.gen(function* () {
    const states = yield* SfcStateDao
    const active = [...(yield* states.listActive(scope))].sort().slice(0, ACTIVE_STATES_READ)
    const reads = yield* states.getMany(active)
    return reads.flatMap((read) => {
      const stored = Result.isSuccess(read) ? Option.getOrUndefined(read.success) : undefined
      if (stored === undefined) return []
      const state = { ...(JSON.parse(stored.doc) as EngineState), scope }
      if (state.status !== "running" && state.status !== "paused") return []
      return [...(state.actions ?? []).filter(failedRun).map((run) => actionIncident(state, run)), ...heldCommandIncidents(state)]
    })
  })

/** Failed actions of running jobs and commands held back by a Pause, in every scope asked, of the kinds asked. */
export const engineIncidents = (request: SourceRequest, kinds: ReadonlySet<string>) =>
  Effect.map(Effect.forEach(request.scopes, scopeEngineIncidents, { concurrency: 8 }), (lists) =>
    lists.flat().filter((item) => kinds.has(item.kind) && afterCursor(request.cursor, item))
  )
