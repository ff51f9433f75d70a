import { Effect } from "effect"
import { JobOrderDao, JobOrderSearch } from "@microdcs/store"
import type { JobOrderRow } from "./JobOrderRow.js"

/**
 * A page of a scope's job orders in one state, from the search index (newest first), with each
 * one's version from one pipelined read of the page's documents: never a scan of the scope's list.
 * `cursor` "0" or "" is the first page; any other is a `next` of this query.
 */
export const jobOrdersInState = (scope: string, state: string, cursor: string, limit: number) =>
  Effect.gen(function* () {
    const search = yield* JobOrderSearch
    const page = yield* search.search({ scopes: [scope], states: [state] }, { limit, ...(cursor === "" || cursor === "0" ? {} : { after: cursor }) })
    const docs = yield* Effect.flatMap(JobOrderDao, (dao) => dao.getMany(page.items.map((i) => i.id)))
    const versions = new Map(docs.map((d) => [d.id, d.version]))
    const items = page.items.map((i): JobOrderRow => ({ id: i.id, priority: i.priority, version: versions.get(i.id) ?? null, state: i.state }))
    return { items, next: page.next, total: page.total, totalExact: page.totalExact }
  })
