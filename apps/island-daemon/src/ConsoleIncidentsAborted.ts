import { Effect, Result } from "effect"
import { decodeJobOrderRecord, isTerminal } from "@microdcs/job-state"
import { type FailedResponse, JobOrderDao, JobResponseFailures } from "@microdcs/store"
import { comesBefore, consoleLink, type Incident, type IncidentPosition, type SourceRequest, sourceCursor } from "./ConsoleIncident.js"
import { descriptionOf } from "./ConsoleIncidentsJobs.js"

/**
 * The aborted jobs of the incident view, from the failed set of job responses (an index the write
 * scripts keep): it holds an Aborted response only while its job order is live, so a job an
 * operator cleared or cancelled (its order retired) or deleted has left it. One page read per
 * scope; the page's orders are still read (one MGET) as a defensive check against drift.
 */

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

/** The orders of `page` that still wait for an operator: stored and not in EndState. */
const openOrders = (page: ReadonlyArray<FailedResponse>) =>
  Effect.gen(function* () {
    if (page.length === 0) return new Set<string>()
    const orders = yield* Effect.flatMap(JobOrderDao, (dao) => dao.getMany([...new Set(page.map((p) => p.response.orderId))]))
    return new Set(orders.flatMap((order) => {
      const decoded = decodeJobOrderRecord(order.doc)
      // A malformed order is listed: the job page shows what is stored.
      return Result.isSuccess(decoded) && isTerminal(decoded.success.state) ? [] : [order.id]
    }))
  })

/**
 * One scope's open aborted jobs after the cursor: one page of the failed set. When the defensive
 * check drops some of a full page (drift a rebuild repairs), the rest of the scope is not read:
 * its last entry read is the `frontier` the incident page ends at, so its `next` goes on from there.
 */
const scopeAborted = (request: SourceRequest, scope: string) =>
  Effect.gen(function* () {
    const failures = yield* JobResponseFailures
    const page = yield* failures.page(scope, { limit: request.limit, before: sourceCursor(request.cursor, "aborted-job", scope) })
    const open = yield* openOrders(page)
    const items = page.filter((p) => open.has(p.response.orderId)).map((p) => abortedOf(scope, p))
    const last = page.at(-1)
    const frontier: IncidentPosition | undefined =
      last === undefined || page.length < request.limit || items.length === page.length
        ? undefined
        : { at: last.at, kind: "aborted-job", scope, id: last.response.id }
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
