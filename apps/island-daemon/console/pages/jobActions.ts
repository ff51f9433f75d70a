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

export const jobControls = (id: string, who: Me, refresh: () => void): JobControls => {
  const comment = h("input", { id: "action-comment", type: "text", maxlength: "1000", placeholder: "comment (recorded with who acted)", "aria-label": "comment" }) as HTMLInputElement
  const buttons = h("span", { id: "action-buttons" })
  const confirmBox = h("div", { id: "action-confirm" })
  const status = statusLine("action-status")
  const path = `/api/console/jobs/${encodeURIComponent(id)}`
  const body = () => (comment.value.trim() === "" ? {} : { comment: comment.value })
  const after = () => {
    if (status.classList.contains("ok")) comment.value = ""
    refresh()
  }
  const method = (name: string) =>
    button(name, DESTRUCTIVE.has(name) ? "act destructive" : "act", () =>
      act({
        status,
        confirmBox,
        question: DESTRUCTIVE.has(name) ? `${name} job ${id}? This cannot be undone.` : undefined,
        send: () => post(`${path}/actions/${name}`, body()),
        done: (r) => `${name} done: ${(r as { state?: string | null }).state ?? "unchanged"}`,
        after
      }), { "data-method": name })
  let shown: string | undefined
  const update = (allowed: ReadonlyArray<string>) => {
    if (shown === allowed.join(",")) return
    shown = allowed.join(",")
    replace(buttons, allowed.length === 0 ? h("span", { class: "empty" }, "no method allowed in this state") : allowed.map((m) => [method(m), " "]))
  }
  const retryButton = (action: string) =>
    button("retry", "act retry", () =>
      act({
        status,
        confirmBox,
        question: `Send action ${action} of job ${id} to the station again now?`,
        send: () => post(`${path}/retry`, { action, ...body() }),
        done: (r) => `retry ${action}: attempt ${(r as { attempt?: number | null }).attempt ?? "-"}`,
        after
      }), { "data-retry": action })
  const element = h(
    "section",
    { id: "job-actions" },
    h("h2", {}, "Act"),
    h("p", { class: "meta" }, "as ", h("span", { class: "mono", id: "acting-user" }, `console:${who.user}`)),
    comment,
    " ",
    buttons,
    confirmBox,
    status
  )
  return { element, update, retryButton }
}
