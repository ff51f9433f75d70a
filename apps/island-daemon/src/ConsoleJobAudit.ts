import { decodeJobOrderRecord, isAllowed, type Origin, originText } from "@microdcs/job-state"
import type { ActionRun, InterventionRecord } from "@microdcs/sfc"
import { Result } from "effect"
import { type ConsoleMethod, consoleMethods } from "./ConsoleActions.js"

/**
 * What the job page offers and shows of who acted: the methods the job order's state allows
 * (from job-state's state machine, so the page shows only those buttons), the actions a retry
 * may send again, and the audit trail.
 */

/** One change of a job order or its response, with the state it led to when the change names a trigger. */
export interface HistoryRow {
  readonly kind: string
  readonly change: string
  readonly version: number
  readonly ts: number
  readonly state: string | null
  /** Who made the change; null for an entry written before origins were recorded. */
  readonly origin: Origin | null
}

/** The console's methods the state of a stored job order allows; none for a document that does not decode. */
export const allowedMethods = (doc: string): ReadonlyArray<ConsoleMethod> => {
  const decoded = decodeJobOrderRecord(doc)
  return Result.isSuccess(decoded) ? consoleMethods.filter((m) => isAllowed(decoded.success.state, m)) : []
}

/**
 * An action a retry takes: its command waiting for a reply, its event awaited, or its command
 * waiting out a Retry policy's back-off (pending after a send; a delayed command is pending
 * before its first send, and is never retried).
 */
export const isOpenForRetry = (run: Pick<ActionRun, "state" | "attempts">): boolean =>
  run.state === "dispatched" || run.state === "waiting" || (run.state === "pending" && run.attempts > 0)

/** The open actions of a running execution: a retry sends their command again (the engine refuses any other). */
export const retryableActions = (execution: { readonly status?: string; readonly actions?: ReadonlyArray<ActionRun> } | null): ReadonlyArray<string> =>
  execution?.status !== "running" ? [] : [...new Set((execution.actions ?? []).filter(isOpenForRetry).map((a) => a.action))]

/** One line of the audit trail: when, what, who (`kind:id`), from where, and the comment or reason. */
export interface AuditRow {
  readonly ts: number
  readonly what: string
  readonly actor: string
  readonly from: string | null
  readonly comment: string | null
}

const row = (ts: number, what: string, by: Origin, comment: string | undefined): AuditRow => ({
  ts,
  what,
  actor: originText(by),
  from: by.from ?? null,
  comment: comment ?? null
})

/**
 * Who acted on the job, oldest first: every change with an origin but the engine's own moves
 * (the MES's, the CLI's and the console's methods, a trigger's start), and every intervention.
 */
export const auditTrail = (history: ReadonlyArray<HistoryRow>, interventions: ReadonlyArray<InterventionRecord> | undefined): ReadonlyArray<AuditRow> =>
  [
    ...history.flatMap((h) => (h.origin === null || h.origin.kind === "engine" ? [] : [row(h.ts, h.change, h.origin, h.origin.comment)])),
    ...(interventions ?? []).map((i) => row(i.at, `${i.intervention} ${i.name}`, i.by, i.reason))
  ].sort((a, b) => a.ts - b.ts)
