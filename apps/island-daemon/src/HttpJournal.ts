import { HttpRouter, HttpServerRequest } from "effect/http"
import { Effect } from "effect"
import { formatDuration, Journal, journalConfigJson, journalSummary } from "@microdcs/journal"
import { tokenRoute } from "./HttpAccess.js"
import { type Reply, storeReadReply } from "./HttpStoreReply.js"

/**
 * The journal's reads in the JSON API, the same as the admin CLI's `journal
 * list|show|recall|counter`. Reads only: a recall here does not stamp the value as recently used.
 *
 *   GET /api/journals?scope=           (items, and unreadable: the stored configurations it cannot read)
 *   GET /api/journals/{scope}/{journal}
 *   GET /api/journals/{scope}/{journal}/recall?key=&value=&limit=&since=
 *   GET /api/journals/{scope}/{journal}/counters/{counter}?value=
 */

const ok = (body: unknown): Reply => ({ status: 200, body })
const badRequest = (message: string): Reply => ({ status: 400, body: { error: "bad-request", message } })

const query = Effect.map(HttpServerRequest.HttpServerRequest, (request) => new URL(request.url, "http://localhost").searchParams)
const param = (name: string) => Effect.map(HttpRouter.params, (params) => params[name] ?? "")

/**
 * A missing journal or counter is 404, a refused input 400, an entry that does not decode or a
 * stored configuration this daemon cannot read 500, any other store failure 503.
 */
const journalReply = storeReadReply({
  notFound: "JournalNotFound",
  corrupt: "CorruptEntry",
  corruptName: "corrupt-entry",
  more: { JournalUnreadable: { status: 500, error: "unreadable-config" } }
})

const figuresOf = (journal: Journal["Service"], scope: string, name: string) =>
  Effect.map(journal.figures(scope), (all) => all.find((f) => f.journal === name))

const journals = Effect.gen(function* () {
  const journal = yield* Journal
  const scope = (yield* query).get("scope") ?? undefined
  const configs = yield* journal.list(scope)
  const figures = new Map<string, { entries: number; bytes: number }>()
  for (const s of new Set(configs.map((c) => c.scope))) {
    for (const f of yield* journal.figures(s)) figures.set(`${s}\u0000${f.journal}`, f)
  }
  // A stored configuration this daemon cannot read is listed with its problems, never left out silently.
  const unreadable = yield* journal.unreadable(scope)
  return ok({ items: configs.map((c) => journalSummary(c, figures.get(`${c.scope}\u0000${c.name}`))), unreadable })
})

const oneJournal = Effect.gen(function* () {
  const journal = yield* Journal
  const scope = yield* param("scope")
  const name = yield* param("journal")
  const config = yield* journal.config(scope, name)
  const figures = yield* figuresOf(journal, scope, name)
  return ok({ scope, ...journalConfigJson(config), entries: figures?.entries ?? 0, bytes: figures?.bytes ?? 0 })
})

/** `limit` 1..1000 (default 20); `since` an ISO time or epoch ms. */
const recallOptions = (q: URLSearchParams): { readonly limit: number; readonly since: number | undefined } | string => {
  const limitText = q.get("limit")
  const limit = limitText === null ? 20 : Number(limitText)
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) return "limit must be an integer from 1 to 1000"
  const sinceText = q.get("since")
  if (sinceText === null) return { limit, since: undefined }
  const since = /^\d+$/.test(sinceText) ? Number(sinceText) : Date.parse(sinceText)
  return Number.isFinite(since) ? { limit, since } : "since must be an ISO time or epoch ms"
}

const recall = Effect.gen(function* () {
  const q = yield* query
  const key = q.get("key")
  const value = q.get("value")
  if (!key) return badRequest("key is required: the search key's name, e.g. key=tool")
  if (!value) return badRequest("value is required: the search key's value, e.g. value=nutrunner-3")
  const options = recallOptions(q)
  if (typeof options === "string") return badRequest(options)
  const scope = yield* param("scope")
  const name = yield* param("journal")
  const entries = yield* Effect.flatMap(Journal, (journal) => journal.recall(scope, name, key, value, { ...options, stamp: false }))
  return ok({ scope, journal: name, key, value, items: entries.map((e) => ({ id: e.id, time: new Date(e.time).toISOString(), event: e.event })) })
})

const counter = Effect.gen(function* () {
  const value = (yield* query).get("value")
  if (!value) return badRequest("value is required: the value of the counter's search key, e.g. value=nutrunner-3")
  const journal = yield* Journal
  const scope = yield* param("scope")
  const name = yield* param("journal")
  const counterName = yield* param("counter")
  const config = yield* journal.config(scope, name)
  const total = yield* journal.counter(scope, name, counterName, value)
  const spec = config.counters.find((c) => c.name === counterName)
  return ok({
    scope,
    journal: name,
    counter: counterName,
    searchKey: spec?.searchKey ?? null,
    value,
    total,
    window: spec === undefined ? null : formatDuration(spec.windowMs),
    resolution: spec?.resolution ?? null
  })
})

/** The journal routes, behind the token when one is set. */
export const journalRoutes = [
  tokenRoute("/api/journals", journalReply(journals)),
  tokenRoute("/api/journals/:scope/:journal", journalReply(oneJournal)),
  tokenRoute("/api/journals/:scope/:journal/recall", journalReply(recall)),
  tokenRoute("/api/journals/:scope/:journal/counters/:counter", journalReply(counter))
] as const
