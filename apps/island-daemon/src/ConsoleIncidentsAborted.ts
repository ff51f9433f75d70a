import { Effect, Result } from "effect"
import { decodeJobOrderRecord, isTerminal } from "@microdcs/job-state"
import { type FailedResponse, JobOrderDao, JobResponseFailures } from "@microdcs/store"
import { comesBefore, consoleLink, type Incident, type IncidentPosition, type SourceRequest, sourceCursor } from "./ConsoleIncident.js"
import { descriptionOf } from "./ConsoleIncidentsJobs.js"

/**
 * The aborted jobs of the incident view, from the failed set of job responses (an index the write
 * scripts keep). A response stays Aborted, and in that set, after its job order is cleared: the
 * jobs an operator already cleared or cancelled (the order retired, or gone with its retention)
 * need nothing more and are left out, their orders read in one MGET per page read.
 */

/** Failed-set pages read per scope for one incident page: past them, cleared jobs leave a frontier. */
export const ABORTED_PAGES_READ = 5

const abortedOf = (scope: string, { at, response }: FailedResponse): Incident => ({
  kind: "aborted-job",
  scope,
  id: response.id,
  at,
  title: `Job ${response.orderId} aborted`,
  reason: descriptionOf(response.doc) || "no reason recorded",
  action: { kind: "clear", target: { scope, jobId: response.orderId }, label: "Clear the aborted job order" },
  link: consoleLink.job(response.orderId)
})

/** The orders of `page` that still wait for an operator: stored and not retired (Clear, Cancel). */
const openOrders = (page: ReadonlyArray<FailedResponse>) =>
  Effect.gen(function* () {
    const orders = yield* Effect.flatMap(JobOrderDao, (dao) => dao.getMany([...new Set(page.map((p) => p.response.orderId))]))
    return new Set(orders.flatMap((order) => {
      const decoded = decodeJobOrderRecord(order.doc)
      // A malformed order is listed: the job page shows what is stored.
      return Result.isSuccess(decoded) && isTerminal(decoded.success.state) ? [] : [order.id]
    }))
  })

/**
 * One scope's open aborted jobs after the cursor: `limit` of them, or every one left, or (past
 * {@link ABORTED_PAGES_READ} pages of cleared ones) those found with the `frontier` read up to.
 */
const scopeAborted = (request: SourceRequest, scope: string) =>
  Effect.gen(function* () {
    const failures = yield* JobResponseFailures
    const items: Array<Incident> = []
    let before = sourceCursor(request.cursor, "aborted-job", scope)
    for (let read = 0; read < ABORTED_PAGES_READ; read++) {
      const page = yield* failures.page(scope, { limit: request.limit, before })
      const open = yield* openOrders(page)
      items.push(...page.filter((p) => open.has(p.response.orderId)).map((p) => abortedOf(scope, p)))
      const last = page.at(-1)
      if (last === undefined || page.length < request.limit || items.length >= request.limit) return { items, frontier: undefined }
      before = { at: last.at, id: last.response.id }
    }
    const frontier: IncidentPosition | undefined = before === undefined ? undefined : { at: before.at, kind: "aborted-job", scope, id: before.id }
    return { items, frontier }
  })

/**
 * The open aborted jobs of every scope asked, and the newest frontier of a scope read only up to
 * it: the page may hold nothing after that frontier (older aborted jobs there are not read yet).
 */
export const abortedJobs = (request: SourceRequest) =>
  Effect.gen(function* () {
    const scopes = yield* Effect.forEach(request.scopes, (scope) => scopeAborted(request, scope), { concurrency: 8 })
    const frontiers = scopes.flatMap((s) => (s.frontier === undefined ? [] : [s.frontier]))
    const frontier = frontiers.reduce<IncidentPosition | undefined>((a, b) => (a === undefined || comesBefore(b, a) ? b : a), undefined)
    return { items: scopes.flatMap((s) => s.items), frontier }
  })
