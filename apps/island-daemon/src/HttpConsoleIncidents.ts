import { Effect } from "effect"
import { keyPartProblem } from "@microdcs/store"
import { decodeCursor, incidentKinds, type IncidentKind, type IncidentPosition, isIncidentKind } from "./ConsoleIncident.js"
import { type IncidentQuery, incidentPage } from "./ConsoleIncidents.js"
import { tokenRoute } from "./HttpAccess.js"
import { badRequest, consoleReply, ok, query } from "./HttpConsoleReply.js"

/** Incidents per page: default 50, at most 200 (each source reads that many per scope). */
const MAX_LIMIT = 200

/** The query of `GET /api/console/incidents`, or every problem with it. */
export const incidentQuery = (q: URLSearchParams): IncidentQuery | ReadonlyArray<string> => {
  const problems: Array<string> = []
  const kinds = new Set<IncidentKind>()
  for (const kind of (q.get("kind") ?? "").split(",").filter((k) => k !== "")) {
    if (isIncidentKind(kind)) kinds.add(kind)
    else problems.push(`kind '${kind}' is not one of ${incidentKinds.join(", ")}`)
  }
  const scope = q.get("scope") ?? ""
  const scopeProblem = scope === "" ? undefined : keyPartProblem("scope", scope)
  if (scopeProblem !== undefined) problems.push(scopeProblem.message)
  const limitText = q.get("limit")
  const limit = limitText === null ? 50 : Number(limitText)
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) problems.push(`limit must be an integer from 1 to ${MAX_LIMIT}`)
  const after = q.get("after") ?? ""
  let cursor: IncidentPosition | undefined
  if (after !== "") {
    cursor = decodeCursor(after)
    if (cursor === undefined) problems.push("after must be the next cursor of a previous page")
  }
  return problems.length > 0 ? problems : { kinds, scope: scope === "" ? undefined : scope, cursor, limit }
}

const incidents = Effect.gen(function* () {
  const parsed = incidentQuery(yield* query)
  if (Array.isArray(parsed)) return badRequest((parsed as ReadonlyArray<string>).join("; "))
  return ok(yield* incidentPage(parsed as IncidentQuery))
})

/** `GET /api/console/incidents?kind=&scope=&after=&limit=`: the island's incidents, newest first (ConsoleIncidents.ts). */
export const incidentsRoute = tokenRoute("/api/console/incidents", consoleReply(incidents))
