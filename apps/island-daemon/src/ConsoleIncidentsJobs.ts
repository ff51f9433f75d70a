import { Effect, Option, Result } from "effect"
import type { ActionRun, ExecutionState } from "@microdcs/sfc"
import { SfcHeartbeat, SfcStateDao } from "@microdcs/store"
import { afterCursor, consoleLink, type Incident, type SourceRequest } from "./ConsoleIncident.js"
import { isOpenForRetry } from "./ConsoleJobAudit.js"

/**
 * The engine sources of the incident view (aborted jobs are in ConsoleIncidentsAborted.ts): from
 * the engine states of the scope's active jobs (read up to {@link ACTIVE_STATES_READ} per scope)
 * failed actions of running jobs and the commands a Pause held back (sent again on Resume).
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

/**
 * An action that failed: waiting out its back-off after a failed attempt (pending, sent before),
 * on a later attempt, or failed for good with its OnError target taken (the job still runs).
 */
const failedRun = (run: ActionRun): boolean =>
  run.state === "failed" || (run.retryAttempt ?? 1) > 1 || (run.state === "pending" && run.attempts > 0)

/** The state records a failed attempt's error only once the action fails for good; before, it is in the job's log. */
const failureReason = (run: ActionRun): string =>
  run.error ?? `attempt ${run.retryAttempt ?? 1} failed${run.state === "pending" ? ", the next one waits its back-off" : ", trying again"}; the error is in the job's log`

/**
 * A retry for an open action (its command waiting for a reply or out its back-off, or its event
 * awaited), as the engine takes one; one failed for good is past retrying: for it, the job page.
 */
const retryOf = (state: Pick<ExecutionState, "jobId" | "scope">, run: ActionRun): Incident["action"] =>
  isOpenForRetry(run)
    ? { kind: "retry-action", target: { scope: state.scope, jobId: state.jobId, action: run.action, visit: run.visit }, label: run.state === "pending" ? "Retry the action now" : "Retry the action" }
    : { kind: "inspect", target: { scope: state.scope, jobId: state.jobId }, label: run.state === "failed" ? "See the job (the action failed for good)" : "See the job" }

const actionIncident = (state: Pick<ExecutionState, "jobId" | "scope" | "startedAt">, run: ActionRun): Incident => ({
  kind: "failed-action",
  scope: state.scope,
  id: `${state.jobId}/${run.action}/${run.visit}`,
  // The state keeps no failure time: the action's start (its log node opened), else its wait's, else the job's.
  at: run.logNode?.at ?? run.waitSince ?? state.startedAt,
  title: `Action ${run.action} of job ${state.jobId} ${run.state === "failed" ? "failed" : "failed, retrying"}`,
  reason: failureReason(run),
  action: retryOf(state, run),
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

/** A stored engine state, or `undefined` for one that is no JSON (the job page shows it as it is). */
const parsedState = (doc: string): EngineState | undefined => {
  try {
    return JSON.parse(doc) as EngineState
  } catch {
    return undefined
  }
}

/** One scope's failed actions and held commands, from at most {@link ACTIVE_STATES_READ} engine states, and how many jobs are active. */
const scopeEngineIncidents = (scope: string) =>
  Effect.gen(function* () {
    const states = yield* SfcStateDao
    const active = yield* states.listActive(scope)
    const reads = yield* states.getMany([...active].sort().slice(0, ACTIVE_STATES_READ))
    const items = reads.flatMap((read) => {
      const stored = Result.isSuccess(read) ? Option.getOrUndefined(read.success) : undefined
      const parsed = stored === undefined ? undefined : parsedState(stored.doc)
      if (parsed === undefined || (parsed.status !== "running" && parsed.status !== "paused")) return []
      const state = { ...parsed, scope }
      return [...(state.actions ?? []).filter(failedRun).map((run) => actionIncident(state, run)), ...heldCommandIncidents(state)]
    })
    return { active: active.length, items }
  })

/** A timer sweep heartbeat older than this, with jobs active, means no engine sweeps the island's timers. */
export const SWEEP_LOST_AFTER_MS = 30_000

/** The timer sweep gone: deadlines and back-offs of the active jobs wait for nobody. */
const sweepIncident = (request: SourceRequest, active: number) =>
  Effect.gen(function* () {
    if (active === 0) return []
    const beat = Option.getOrUndefined(yield* Effect.flatMap(SfcHeartbeat, (h) => h.last))
    if (beat !== undefined && request.now - beat <= SWEEP_LOST_AFTER_MS) return []
    const incident: Incident = {
      kind: "lost-lease",
      scope: request.scopes.length === 1 ? request.scopes[0]! : "",
      id: "sfc/timer-sweep",
      at: beat ?? 0,
      title: "No engine sweeps the timers",
      reason: `${beat === undefined ? "the timer sweep never wrote its heartbeat" : `the timer sweep's heartbeat is ${Math.round((request.now - beat) / 1000)} s old`}; the deadlines and back-offs of ${active} active jobs wait`,
      action: { kind: "inspect", target: { role: "sfc-engine" }, label: "Check the engines' readiness" },
      link: "/console"
    }
    return [incident]
  })

/**
 * Failed actions of running jobs, commands held back by a Pause and a timer sweep gone (while jobs
 * are active), in every scope asked, of the kinds asked.
 */
export const engineIncidents = (request: SourceRequest, kinds: ReadonlySet<string>) =>
  Effect.gen(function* () {
    const scopes = yield* Effect.forEach(request.scopes, scopeEngineIncidents, { concurrency: 8 })
    const sweep = kinds.has("lost-lease") ? yield* sweepIncident(request, scopes.reduce((n, s) => n + s.active, 0)) : []
    return [...scopes.flatMap((s) => s.items), ...sweep].filter((item) => kinds.has(item.kind) && afterCursor(request.cursor, item))
  })
