import { api, post } from "./api.js"
import { h, replace } from "./dom.js"

/**
 * What the pages need to act: whether this token may (`/api/console/me`; a viewer's page shows
 * no action controls, and the server refuses a viewer anyway), an in-page confirmation for what
 * ends or discards work, and a status line that shows the server's answer or refusal as text.
 */

export interface Me {
  readonly user: string
  readonly role: string
  readonly actions: boolean
}

let known: Promise<Me> | undefined

/** Who this token is; asked once per page load. A failure reads as "may not act". */
export const me = (): Promise<Me> => {
  known ??= api<Me>("/api/console/me").catch(() => ({ user: "", role: "viewer", actions: false }))
  return known
}

/** A line that says what the last action did, or why it was refused (`role=status`, read by screen readers). */
export const statusLine = (id: string) => h("p", { id, class: "action-status", role: "status" })

/**
 * Runs `send` and shows its outcome in `status`: the server's message for a refusal. With
 * `question`, asks first in `confirmBox` (Confirm / Cancel buttons in the page) and sends only on Confirm.
 */
export const act = (options: {
  readonly status: HTMLElement
  readonly confirmBox: HTMLElement
  readonly question?: string | undefined
  readonly send: () => Promise<unknown>
  readonly done: (result: unknown) => string
  readonly after?: () => void
}) => {
  const run = async () => {
    replace(options.confirmBox)
    replace(options.status, "sending…")
    options.status.className = "action-status"
    try {
      const result = await options.send()
      replace(options.status, options.done(result))
      options.status.className = "action-status ok"
    } catch (error) {
      replace(options.status, error instanceof Error ? error.message : String(error))
      options.status.className = "action-status problem"
    }
    options.after?.()
  }
  if (options.question === undefined) return void run()
  replace(
    options.confirmBox,
    h("span", { class: "question" }, options.question, " "),
    button("Confirm", "confirm", () => void run()),
    " ",
    button("Cancel", "cancel", () => replace(options.confirmBox))
  )
}

/** A button with a click handler; its label and data attributes as text. */
export const button = (label: string, cls: string, onClick: () => void, data: Readonly<Record<string, string>> = {}) => {
  const element = h("button", { type: "button", class: cls, ...data }, label)
  element.addEventListener("click", onClick)
  return element
}

export { post }
