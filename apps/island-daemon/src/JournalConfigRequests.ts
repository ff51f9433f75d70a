import { Effect } from "effect"
import type { ExtraRequestHandler } from "@microdcs/island-mqtt"
import { type HandleResult, type JobControlReply, type JobControlRequest, replyTypeOf, scopeOf } from "@microdcs/job-control"
import { ReturnStatus } from "@microdcs/job-state"
import { handleJournalConfigEvent, Journal, JOURNAL_CONFIG_EVENT_TYPE, parseJournalConfig } from "@microdcs/journal"
import { eventConditions } from "@microdcs/sfc"
import type { Metrics } from "./Metrics.js"

/**
 * The journal's configuration event (`...config.journal.v1`) in the job control
 * ingress, beside the station configuration events: scope from the `subject` (up to the first
 * `/`), extension `method` PUT (data = the configuration) or DELETE (data = `{ name }`). A
 * refused configuration is answered INVALID_REQUEST with every problem (`Problems`, and in
 * `mdcserrormessage`), and nothing is stored.
 */

const REPLY_TYPE = replyTypeOf(JOURNAL_CONFIG_EVENT_TYPE)

const reply = (data: Readonly<Record<string, unknown>>): HandleResult => ({
  reply: { type: REPLY_TYPE, data: { ReturnStatus: ReturnStatus.NO_ERROR, ...data }, status: ReturnStatus.NO_ERROR },
  statusEvents: []
})

const refusal = (kind: string, problems: ReadonlyArray<string>): JobControlReply => ({
  type: REPLY_TYPE,
  data: { ReturnStatus: ReturnStatus.INVALID_REQUEST, Problems: problems },
  status: ReturnStatus.INVALID_REQUEST,
  error: { kind, message: problems.join("; ") }
})

const methodOf = (request: JobControlRequest): string => (request.extensions["method"] ?? "PUT").toUpperCase()

/**
 * What is wrong with the event before anything is written (no dedupe claim either): the scope,
 * the method, the configuration itself. What needs the stored journals (a counter name another
 * journal of the scope has) is found by the handler, still before it writes.
 */
export const journalConfigProblems = (request: JobControlRequest): ReadonlyArray<string> => {
  const scope = scopeOf(request.subject)
  const method = methodOf(request)
  const problems: Array<string> = []
  if (scope === undefined) problems.push("subject must name the scope")
  if (method !== "PUT" && method !== "DELETE") problems.push(`method must be PUT or DELETE, got '${request.extensions["method"]}'`)
  if (method === "DELETE") {
    const name = (request.data as { readonly name?: unknown } | null | undefined)?.name
    if (typeof name !== "string" || name === "") problems.push("a DELETE names the journal in data.name")
  }
  if (method === "PUT") {
    const parsed = parseJournalConfig(scope ?? "-", request.data, eventConditions)
    if ("problems" in parsed) problems.push(...parsed.problems)
  }
  return problems
}

/** The journal configuration handler for `JobControlIngress({ extraRequests })`. */
export const journalConfigRequests = (journal: Journal["Service"], metrics: Metrics): Readonly<Record<string, ExtraRequestHandler>> => ({
  [JOURNAL_CONFIG_EVENT_TYPE]: {
    refuse: (request) => {
      const problems = journalConfigProblems(request)
      if (problems.length === 0) return undefined
      metrics.recordJournal("config", "refused")
      return refusal("JournalConfigInvalid", problems)
    },
    handle: (request) =>
      handleJournalConfigEvent({ type: request.type, subject: scopeOf(request.subject), data: request.data, extensions: request.extensions }).pipe(
        Effect.provideService(Journal, journal),
        Effect.map((outcome) =>
          outcome._tag === "JournalConfigured"
            ? reply({ Journal: outcome.config.name, Created: outcome.created })
            : reply({ Journal: outcome.journal, Removed: 1 })
        ),
        // DELETE is idempotent, as for the station configuration: a journal already gone removes nothing.
        Effect.catchTag("JournalNotFound", (e) => Effect.succeed(reply({ Journal: e.journal, Removed: 0 }))),
        Effect.catchTag("JournalConfigInvalid", (e) => Effect.succeed({ reply: refusal("JournalConfigInvalid", e.problems), statusEvents: [] })),
        Effect.catchTag("InvalidInput", (e) => Effect.succeed({ reply: refusal("InvalidInput", [`${e.field}: ${e.message}`]), statusEvents: [] })),
        Effect.tap((result) => Effect.sync(() => metrics.recordJournal("config", result.reply.error === undefined ? "applied" : "refused")))
      )
  }
})
