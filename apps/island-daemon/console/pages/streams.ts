import { api } from "../api.js"
import { act, button, me, post, statusLine } from "../acts.js"
import { h, replace, section, table, when } from "../dom.js"
import { coalesce, follow } from "../live.js"

interface StreamsView {
  readonly streams: ReadonlyArray<{
    readonly scope: string
    readonly stream: string
    readonly key: string
    readonly type: string
    readonly length: number
    readonly groups: ReadonlyArray<{ readonly group: string; readonly consumers: number; readonly pending: number; readonly lag: number | null; readonly lastDeliveredId: string; readonly pendingByConsumer: ReadonlyArray<{ readonly consumer: string; readonly count: number }> }>
    readonly deadLetters: { readonly length: number; readonly entries: ReadonlyArray<{ readonly id: string; readonly originalId: string; readonly group: string; readonly consumer: string; readonly deliveries: number; readonly error: string; readonly movedAt: number; readonly fields: Readonly<Record<string, string>> }> }
  }>
}

type Stream = StreamsView["streams"][number]

/** An operator's redrive buttons: one per dead letter, and one for all of a stream, asked first. */
const redrives = (status: HTMLElement, confirmBox: HTMLElement, after: () => void) => {
  const base = (st: Stream) => `/api/console/scopes/${encodeURIComponent(st.scope)}/streams/${encodeURIComponent(st.stream)}/deadletters`
  const done = (r: unknown) => {
    const { redriven, skipped } = r as { redriven: number; skipped: number }
    return `redriven ${redriven}, skipped ${skipped}`
  }
  return {
    one: (st: Stream, id: string) =>
      button("redrive", "act redrive", () => act({ status, confirmBox, send: () => post(`${base(st)}/${encodeURIComponent(id)}/redrive`, {}), done, after }), { "data-redrive": id }),
    all: (st: Stream) =>
      button(`redrive all ${st.deadLetters.length}`, "act destructive redrive-all", () =>
        act({ status, confirmBox, question: `Redrive all ${st.deadLetters.length} dead letters of ${st.key}?`, send: () => post(`${base(st)}/redrive-all`, {}), done, after }), { "data-redrive-all": `${st.stream}:${st.scope}` })
  }
}

/** One stream: its groups and its dead letters, with the operator's redrives when `redrive` is given. */
const streamSection = (st: Stream, redrive: ReturnType<typeof redrives> | undefined) =>
  h(
    "section",
    { class: "stream", "data-stream": `${st.stream}:${st.scope}` },
    h("h2", {}, h("span", { class: "mono" }, st.key), " ", h("span", { class: "meta" }, `${st.type} · length ${st.length}`)),
    st.groups.length === 0
      ? h("p", { class: "empty" }, "no consumer groups")
      : table(
          ["group", "consumers", "lag", "pending", "pending by consumer", "last delivered"],
          st.groups.map((g) =>
            h("tr", {}, h("td", {}, g.group), h("td", {}, String(g.consumers)), h("td", {}, g.lag === null ? "unknown" : String(g.lag)), h("td", {}, String(g.pending)), h("td", { class: "mono" }, g.pendingByConsumer.map((c) => `${c.consumer} ${c.count}`).join(", ")), h("td", { class: "mono" }, g.lastDeliveredId))
          )
        ),
    h("h3", {}, `Dead letters: ${st.deadLetters.length}`, " ", redrive !== undefined && st.deadLetters.length > 0 ? redrive.all(st) : null),
    st.deadLetters.entries.length === 0
      ? null
      : table(
          ["moved", "entry", "group", "consumer", "deliveries", "error", "fields", ""],
          st.deadLetters.entries.map((d) =>
            h(
              "tr",
              { class: "dead-letter", "data-id": d.id },
              h("td", {}, when(d.movedAt)),
              h("td", { class: "mono" }, d.originalId),
              h("td", {}, d.group),
              h("td", { class: "mono" }, d.consumer),
              h("td", {}, String(d.deliveries)),
              h("td", { class: "problem error" }, d.error),
              h("td", { class: "mono" }, JSON.stringify(d.fields)),
              h("td", {}, redrive === undefined ? null : redrive.one(st, d.id))
            )
          ),
          { class: "dead-letters" }
        )
  )

/**
 * The streams page: per scope and stream its length, groups (lag, pending by consumer) and dead
 * letters with their errors, for an operator with a redrive of each and of all; live.
 */
export const streamsPage = (root: HTMLElement) => {
  document.title = "Streams · island console"
  // Kept across refreshes: the answer to the last redrive, and a question being asked.
  const status = statusLine("streams-status")
  const confirmBox = h("div", { id: "streams-confirm" })
  const content = h("div", {})
  replace(root, h("h1", {}, "Streams"), confirmBox, status, content)
  const render = async () => {
    const who = await me()
    const redrive = who.actions ? redrives(status, confirmBox, () => refresh()) : undefined
    let view: StreamsView
    try {
      view = await api<StreamsView>("/api/console/streams")
    } catch (error) {
      replace(content, h("p", { class: "problem" }, String(error)))
      return
    }
    replace(
      content,
      view.streams.map((st) => streamSection(st, redrive)),
      view.streams.length === 0 ? section("No streams", h("p", { class: "empty" }, "no scope has streams yet")) : null
    )
  }
  const refresh = coalesce(render, 500)
  follow({ figures: "1" }, (event) => {
    if (event.type === "figures") refresh()
  }, refresh)
}
