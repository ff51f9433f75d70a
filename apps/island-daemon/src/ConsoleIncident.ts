/**
 * One thing on the island that needs an operator, as the incident view lists it: what it is, where,
 * since when, why, and what can be done about it. The sources (ConsoleIncidentsJobs.ts,
 * ConsoleIncidentsStreams.ts) each give their newest items; ConsoleIncidents.ts merges them.
 */

export const incidentKinds = ["aborted-job", "failed-action", "dead-letter", "held-request", "lost-lease"] as const
export type IncidentKind = (typeof incidentKinds)[number]

export const isIncidentKind = (text: string): text is IncidentKind => (incidentKinds as ReadonlyArray<string>).includes(text)

/**
 * What can be done about an incident, as data: the console's action controls (and the POST routes
 * behind them) act on `kind` and `target`; the view itself acts on nothing.
 */
export interface IncidentAction {
  readonly kind: "clear" | "retry-action" | "redrive" | "reclaim" | "resume" | "inspect"
  readonly target: Readonly<Record<string, string | number>>
  /** What the action does, for the operator. */
  readonly label: string
}

export interface Incident {
  readonly kind: IncidentKind
  readonly scope: string
  /** Unique within kind and scope: a response id, `job/action/visit`, a stream entry id, a consumer. */
  readonly id: string
  /** Epoch ms: when it happened (ended, failed, moved, last delivered, last seen). */
  readonly at: number
  readonly title: string
  /** The engine's or the store's own words on why, as stored. */
  readonly reason: string
  readonly action: IncidentAction
  /** The console page where it can be seen and acted on. */
  readonly link: string
}

/** A place in the list: items come newest first, ties by kind, scope and id, descending. */
export interface IncidentPosition {
  readonly at: number
  readonly kind: string
  readonly scope: string
  readonly id: string
}

const tieKey = (p: IncidentPosition) => `${p.kind}\u0000${p.scope}\u0000${p.id}`

/** Whether `a` comes before `b` in the list (newer, or as new with a greater tie key). */
export const comesBefore = (a: IncidentPosition, b: IncidentPosition): boolean =>
  a.at !== b.at ? a.at > b.at : tieKey(a) > tieKey(b)

/** Whether `item` comes after the cursor (every item does without one). */
export const afterCursor = (cursor: IncidentPosition | undefined, item: IncidentPosition): boolean =>
  cursor === undefined || comesBefore(cursor, item)

/** The cursor of the item a page ended with: base64url of its position, opaque to the client. */
export const encodeCursor = (p: IncidentPosition): string =>
  Buffer.from(JSON.stringify([p.at, p.kind, p.scope, p.id]), "utf8").toString("base64url")

/** The position a cursor names, or `undefined` when it is none of ours. */
export const decodeCursor = (text: string): IncidentPosition | undefined => {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(text, "base64url").toString("utf8"))
    if (!Array.isArray(parsed) || parsed.length !== 4) return undefined
    const [at, kind, scope, id] = parsed as ReadonlyArray<unknown>
    const texts = [kind, scope, id].every((t) => typeof t === "string")
    return typeof at === "number" && Number.isFinite(at) && texts ? { at, kind: kind as string, scope: scope as string, id: id as string } : undefined
  } catch {
    return undefined
  }
}

/** Newest first, across sources; the first `limit` after the cursor. */
export const mergeIncidents = (lists: ReadonlyArray<ReadonlyArray<Incident>>, cursor: IncidentPosition | undefined, limit: number) =>
  lists
    .flat()
    .filter((item) => afterCursor(cursor, item))
    .sort((a, b) => (comesBefore(a, b) ? -1 : comesBefore(b, a) ? 1 : 0))
    .slice(0, limit)

/** What every source is asked: its newest items after the cursor in these scopes, at most `limit`. */
export interface SourceRequest {
  readonly scopes: ReadonlyArray<string>
  readonly cursor: IncidentPosition | undefined
  readonly limit: number
  /** Epoch ms of the read, for the times derived from idle times. */
  readonly now: number
}

export const consoleLink = {
  job: (id: string) => `/console/jobs/${encodeURIComponent(id)}`,
  streams: (scope: string) => `/console/streams#${encodeURIComponent(scope)}`
}

/**
 * Where one source's part of the list starts: `{ at, id }` such that the source's items of
 * `kind` in `scope` come after the cursor exactly when they are older than `at`, or as old with an
 * id below `id` ("" takes none of `at`'s, "\uffff" all of them).
 */
export const sourceCursor = (cursor: IncidentPosition | undefined, kind: IncidentKind, scope: string) => {
  if (cursor === undefined) return undefined
  if (kind === cursor.kind && scope === cursor.scope) return { at: cursor.at, id: cursor.id }
  return { at: cursor.at, id: tieKey({ at: 0, kind, scope, id: "" }) < tieKey(cursor) ? "\uffff" : "" }
}
