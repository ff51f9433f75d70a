import { act, button, type Me, post, statusLine } from "../acts.js"
import { h, replace } from "../dom.js"

/**
 * The job page's controls for an operator: a button for each method the job's state allows (the
 * server says which), a comment recorded with who acted, an in-page confirmation for the methods
 * that end or discard work, and the server's answer or refusal as text. Made once per page and
 * kept across the page's live refreshes, so a comment being typed survives them.
 */

/** Methods that end or discard work: asked before they are sent. */
const DESTRUCTIVE = new Set(["Stop", "Abort", "Cancel", "Clear"])

export interface JobControls {
  readonly element: HTMLElement
  /** Shows the buttons of the methods `allowed` now. */
  readonly update: (allowed: ReadonlyArray<string>) => void
  /** A retry button for an open action (in the page's action table). */
  readonly retryButton: (action: string) => HTMLElement
}

/** What a button of the panel acts with: the job, the comment field, the confirmation box, the status line. */
interface Panel {
  readonly id: string
  readonly path: string
  readonly comment: HTMLInputElement
  readonly confirmBox: HTMLElement
  readonly status: HTMLElement
  readonly after: () => void
}

const commentOf = (panel: Panel) => (panel.comment.value.trim() === "" ? {} : { comment: panel.comment.value })

const methodButton = (panel: Panel, name: string) =>
  button(name, DESTRUCTIVE.has(name) ? "act destructive" : "act", () =>
    act({
      status: panel.status,
      confirmBox: panel.confirmBox,
      question: DESTRUCTIVE.has(name) ? `${name} job ${panel.id}? This cannot be undone.` : undefined,
      send: () => post(`${panel.path}/actions/${name}`, commentOf(panel)),
      done: (r) => `${name} done: ${(r as { state?: string | null }).state ?? "unchanged"}`,
      after: panel.after
    }), { "data-method": name })

const retryButton = (panel: Panel, action: string) =>
  button("retry", "act retry", () =>
    act({
      status: panel.status,
      confirmBox: panel.confirmBox,
      question: `Send action ${action} of job ${panel.id} to the station again now?`,
      send: () => post(`${panel.path}/retry`, { action, ...commentOf(panel) }),
      done: (r) => `retry ${action}: attempt ${(r as { attempt?: number | null }).attempt ?? "-"}`,
      after: panel.after
    }), { "data-retry": action })

export const jobControls = (id: string, who: Me, refresh: () => void): JobControls => {
  const comment = h("input", { id: "action-comment", type: "text", maxlength: "1000", placeholder: "comment (recorded with who acted)", "aria-label": "comment" }) as HTMLInputElement
  const status = statusLine("action-status")
  const after = () => {
    // A comment belongs to the action it went with: cleared once that was done.
    if (status.classList.contains("ok")) comment.value = ""
    refresh()
  }
  const panel: Panel = { id, path: `/api/console/jobs/${encodeURIComponent(id)}`, comment, confirmBox: h("div", { id: "action-confirm" }), status, after }
  const buttons = h("span", { id: "action-buttons" })
  let shown: string | undefined
  const update = (allowed: ReadonlyArray<string>) => {
    if (shown === allowed.join(",")) return
    shown = allowed.join(",")
    replace(buttons, allowed.length === 0 ? h("span", { class: "empty" }, "no method allowed in this state") : allowed.map((m) => [methodButton(panel, m), " "]))
  }
  const acting = h("p", { class: "meta" }, "as ", h("span", { class: "mono", id: "acting-user" }, `console:${who.user}`))
  const element = h("section", { id: "job-actions" }, h("h2", {}, "Act"), acting, comment, " ", buttons, panel.confirmBox, status)
  return { element, update, retryButton: (action) => retryButton(panel, action) }
}
