import { Effect } from "effect"
import { ScopeRegistry } from "@microdcs/store"
import { comesBefore, encodeCursor, type Incident, type IncidentKind, type IncidentPosition, mergeIncidents, type SourceRequest } from "./ConsoleIncident.js"
import { abortedJobs } from "./ConsoleIncidentsAborted.js"
import { engineIncidents } from "./ConsoleIncidentsJobs.js"
import { streamIncidents } from "./ConsoleIncidentsStreams.js"

export interface IncidentQuery {
  /** The kinds asked; every kind when empty. */
  readonly kinds: ReadonlySet<IncidentKind>
  /** One scope, or every registered scope. */
  readonly scope: string | undefined
  readonly cursor: IncidentPosition | undefined
  readonly limit: number
}

export interface IncidentPage {
  readonly items: ReadonlyArray<Incident>
  /** Pass as `after` for the next page; `null` when this page is the last. */
  readonly next: string | null
  /** How many scopes were read. */
  readonly scopes: number
}

const wants = (query: IncidentQuery, kind: IncidentKind) => query.kinds.size === 0 || query.kinds.has(kind)

/**
 * One page of the island's incidents, newest first across every source: each source gives at
 * most `limit` items after the cursor in every scope asked, and the merge keeps the first `limit`.
 * A page costs one bounded read per source, scope (and stream group), however long the island ran.
 */
export const incidentPage = (query: IncidentQuery) =>
  Effect.gen(function* () {
    const scopes = query.scope !== undefined ? [query.scope] : [...(yield* Effect.flatMap(ScopeRegistry, (r) => r.list))].sort()
    const request: SourceRequest = { scopes, cursor: query.cursor, limit: query.limit, now: Date.now() }
    const streamKinds = new Set<string>((["dead-letter", "held-request", "lost-lease"] as const).filter((k) => wants(query, k)))
    const engineKinds = new Set<string>((["failed-action", "held-request", "lost-lease"] as const).filter((k) => wants(query, k)))
    const [aborted, actions, streams] = yield* Effect.all(
      [
        wants(query, "aborted-job") ? abortedJobs(request) : Effect.succeed({ items: [], frontier: undefined }),
        engineKinds.size > 0 ? engineIncidents(request, engineKinds) : Effect.succeed([]),
        streamKinds.size > 0 ? streamIncidents(request, streamKinds) : Effect.succeed([])
      ],
      { concurrency: 3 }
    )
    // Past a frontier of the aborted jobs' reads, the list goes on from it on the next page.
    const { frontier } = aborted
    const within = (item: Incident) => frontier === undefined || !comesBefore(frontier, item)
    const items = mergeIncidents([aborted.items, actions, streams].map((list) => list.filter(within)), query.cursor, query.limit)
    const last = items.at(-1)
    const next = items.length === query.limit && last !== undefined ? encodeCursor(last) : frontier === undefined ? null : encodeCursor(frontier)
    return { items, next, scopes: scopes.length } satisfies IncidentPage
  })
