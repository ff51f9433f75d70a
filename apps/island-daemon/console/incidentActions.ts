import { act, button, type Me, post, statusLine } from "./acts.js"
import { type Child, h, replace } from "./dom.js"

/**
 * The incident page's controls for an operator: each incident's action (its `kind` and `target`,
 * as the server describes it) wired to the console's action routes, one confirmation box and one
 * status line for the page (they outlive the row, which goes once the incident is resolved). A
 * viewer gets no controls, only the link (and the server refuses a viewer's POST anyway).
 *
 *   clear         Clear of the aborted job order, asked first (it cannot be undone)
 *   resume        Resume of the paused job (sends the commands the Pause held back)
 *   retry-action  the open action's command again, with a comment (required)
 *   redrive       the dead letter back onto its stream
 *   reclaim       none: the group's live consumers take such entries over on their own (see RECLAIM_NOTE)
 *   inspect       none: a link to where to look
 */

export interface IncidentAction {
  readonly kind: string
  readonly target: Readonly<Record<string, string | number>>
  readonly label: string
}

/**
 * Why a held or lost entry has no button: every consumer of a scope stream takes over the pending
 * entries of a consumer without heartbeat, and any entry idle past its claim time, by itself. An
 * entry that stays listed means no live consumer of that group reads it; a claim from the console
 * would hand it to one that is not there, or to one that never reads its own pending list.
 */
export const RECLAIM_NOTE =
  "no action here: the group's live consumers take such entries over on their own; it stays only while none runs, so start or fix the consumer"

/** What a button acts with: the page's confirmation box and status line, and the page's refetch. */
interface Panel {
  readonly confirmBox: HTMLElement
  readonly status: HTMLElement
  readonly after: () => void
}

const text = (target: IncidentAction["target"], name: string) => String(target[name] ?? "")
const jobPath = (target: IncidentAction["target"]) => `/api/console/jobs/${encodeURIComponent(text(target, "jobId"))}`

/** A job method (Clear asked first, it discards the job order; Resume not). */
const methodButton = (panel: Panel, action: IncidentAction, method: "Clear" | "Resume") =>
  button(method === "Clear" ? "clear" : "resume", method === "Clear" ? "act destructive" : "act", () =>
    act({
      ...panel,
      question: method === "Clear" ? `Clear job ${text(action.target, "jobId")}? This cannot be undone.` : undefined,
      send: () => post(`${jobPath(action.target)}/actions/${method}`, { scope: text(action.target, "scope") }),
      done: (r) => `${method} ${text(action.target, "jobId")} done: ${(r as { state?: string | null }).state ?? "unchanged"}`
    }), { "data-act": action.kind })

/** The retry asks for a comment in the page and sends nothing without one. */
const retryButton = (panel: Panel, action: IncidentAction) => {
  const jobId = text(action.target, "jobId")
  const name = text(action.target, "action")
  const send = (comment: HTMLInputElement) => {
    if (comment.value.trim() === "") {
      replace(panel.status, "a comment is required to retry an action: say why")
      panel.status.className = "action-status problem"
      return
    }
    act({
      ...panel,
      send: () => post(`${jobPath(action.target)}/retry`, { action: name, comment: comment.value }),
      done: (r) => `retry ${name} of ${jobId}: attempt ${(r as { attempt?: number | null }).attempt ?? "-"}`
    })
  }
  return button("retry", "act retry", () => {
    const comment = h("input", { id: "incident-comment", type: "text", maxlength: "1000", required: "", placeholder: "why (recorded with who acted)", "aria-label": "comment" }) as HTMLInputElement
    replace(panel.confirmBox, h("span", { class: "question" }, `Send action ${name} of job ${jobId} to the station again now? `), comment, " ",
      button("Retry", "confirm", () => send(comment)), " ", button("Cancel", "cancel", () => replace(panel.confirmBox)))
    comment.focus()
  }, { "data-act": action.kind })
}

const redriveButton = (panel: Panel, action: IncidentAction) => {
  const [scope, stream, entry] = ["scope", "stream", "id"].map((n) => encodeURIComponent(text(action.target, n)))
  return button("redrive", "act", () =>
    act({
      ...panel,
      send: () => post(`/api/console/scopes/${scope}/streams/${stream}/deadletters/${entry}/redrive`, {}),
      done: (r) => `redrive of ${text(action.target, "id")}: ${(r as { redriven?: number }).redriven === 1 ? "back on the stream" : "skipped"}`
    }), { "data-act": action.kind })
}

/** The control of one incident's action, or none (a viewer; reclaim and inspect are links). */
const controlOf = (panel: Panel, action: IncidentAction): Child => {
  switch (action.kind) {
    case "clear":
      return methodButton(panel, action, "Clear")
    case "resume":
      return methodButton(panel, action, "Resume")
    case "retry-action":
      return retryButton(panel, action)
    case "redrive":
      return redriveButton(panel, action)
    default:
      return null
  }
}

export interface IncidentControls {
  /** The page's confirmation box and status line (nothing for a viewer). */
  readonly element: HTMLElement | null
  /** What goes beside an incident's link: its button for an operator, the reason there is none for a reclaim. */
  readonly control: (action: IncidentAction) => Child
}

export const incidentControls = (who: Me, refetch: () => void): IncidentControls => {
  const reclaimNote = (action: IncidentAction) => (action.kind === "reclaim" ? h("small", { class: "note", title: RECLAIM_NOTE }, "consumers reclaim on their own") : null)
  if (!who.actions) return { element: null, control: reclaimNote }
  const panel: Panel = { confirmBox: h("div", { id: "incident-confirm" }), status: statusLine("incident-status"), after: refetch }
  const acting = h("p", { class: "meta" }, "acting as ", h("span", { class: "mono", id: "acting-user" }, `console:${who.user}`))
  return {
    element: h("section", { id: "incident-actions" }, acting, panel.confirmBox, panel.status),
    control: (action) => controlOf(panel, action) ?? reclaimNote(action)
  }
}
