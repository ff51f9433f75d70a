import { Effect, Result, Option } from "effect"
import { decodeJobOrderRecord, decodeOrigin, isTrigger, type JobState, JobStates, normalizedName, transition } from "@microdcs/job-state"
import { canonicalRecipeDigest, type StoredDocument } from "@microdcs/store"
import { ChangeStream, JobOrderDao, JobResponseDao, SfcRecipes, SfcStateDao } from "@microdcs/store"
import type { ExecutionState, Recipe } from "@microdcs/sfc"
import { recipeGraph, type RecipeGraph } from "./ConsoleGraph.js"
import { allowedMethods, auditTrail, type HistoryRow, retryableActions } from "./ConsoleJobAudit.js"

export type { HistoryRow } from "./ConsoleJobAudit.js"
import { jobResponseView } from "./JobResponseView.js"

/** Change entries read for one job's history per request at most: the history of a job on a huge stream is cut, and says so. */
const HISTORY_SCAN = 20_000
const PAGE = 1_000
/** Histories kept per process: a job page refreshes on every step, and then reads only the entries after the last one read. */
const CACHED_HISTORIES = 1_000

interface History {
  readonly rows: Array<HistoryRow>
  after: string
  state: JobState
  cut: boolean
}

const histories = new Map<string, History>()

/** The job order's and its response's change entries, oldest first, with the state each trigger led to. */
const historyOf = (scope: string, id: string) =>
  Effect.gen(function* () {
    const changes = yield* ChangeStream
    const key = `${scope}\u0000${id}`
    const known = histories.get(key)
    const history: History = known ?? { rows: [], after: "0", state: JobStates.InitialState, cut: false }
    let scanned = 0
    while (scanned < HISTORY_SCAN) {
      const page = yield* changes.read(scope, { after: history.after, count: PAGE })
      for (const entry of page.entries) {
        if (entry.id !== id && entry.id !== `${id}-response`) continue
        let reached: string | null = null
        if (entry.kind === "joborder" && isTrigger(entry.change)) {
          const moved = transition(history.state, entry.change)
          if (Result.isSuccess(moved)) history.state = moved.success
          reached = normalizedName(history.state)
        }
        history.rows.push({ kind: entry.kind, change: entry.change, version: entry.version, ts: entry.ts, state: reached, origin: decodeOrigin(entry.origin) ?? null })
      }
      scanned += page.entries.length
      history.after = page.next
      if (page.entries.length < PAGE) break
    }
    // A first read that stopped early has not seen the job's newest entries: not kept, says "cut".
    history.cut ||= scanned >= HISTORY_SCAN
    if (known === undefined && !history.cut) {
      if (histories.size >= CACHED_HISTORIES) histories.delete(histories.keys().next().value!)
      histories.set(key, history)
    }
    return { rows: [...history.rows], cut: history.cut }
  })

const parsed = (doc: StoredDocument) => JSON.parse(doc.doc) as unknown

/** The execution state as the page needs it, the recipe replaced by its digest and graph. */
const executionOf = (jobId: string) =>
  Effect.gen(function* () {
    const stored = yield* Effect.flatMap(SfcStateDao, (dao) => dao.get(jobId)).pipe(Effect.option)
    if (Option.isNone(stored)) return null
    const state = JSON.parse(stored.value.doc) as Omit<ExecutionState, "recipe"> & { readonly recipe?: Recipe }
    let recipe = state.recipe
    let digest = state.recipeDigest
    if (recipe === undefined && digest !== undefined) {
      const text = yield* Effect.flatMap(SfcRecipes, (r) => r.get(digest!))
      if (Option.isSome(text)) recipe = JSON.parse(text.value) as Recipe
    }
    // A state that carries its recipe (written before recipes were stored by digest): the catalogue's digest of it.
    if (recipe !== undefined) digest ??= canonicalRecipeDigest(recipe)
    const graph: RecipeGraph | null =
      recipe === undefined || digest === undefined ? null : yield* recipeGraph(digest, recipe).pipe(Effect.orElseSucceed(() => null))
    const { recipe: _recipe, ...rest } = state
    return { ...rest, recipeDigest: digest ?? null, version: stored.value.version, graph }
  })

/**
 * Everything the job page shows, in one read: the job order and its state history, its job
 * response, its execution with the recipe graph, who acted on it (`audit`), the methods its state
 * allows (`allowed`) and the actions a retry may send again (`retryable`). `null` when the job
 * order does not exist.
 */
export const jobView = (id: string) =>
  Effect.gen(function* () {
    const order = yield* Effect.flatMap(JobOrderDao, (dao) => dao.get(id)).pipe(Effect.option)
    if (Option.isNone(order)) return null
    const decoded = decodeJobOrderRecord(order.value.doc)
    const response = yield* Effect.flatMap(JobResponseDao, (dao) => dao.byOrder(id)).pipe(Effect.option)
    const history = yield* historyOf(order.value.scope, id)
    const execution = yield* executionOf(id)
    return {
      id,
      scope: order.value.scope,
      version: order.value.version,
      state: Result.isSuccess(decoded) ? normalizedName(decoded.success.state) : null,
      document: parsed(order.value),
      history: history.rows,
      historyCut: history.cut,
      response: Option.isSome(response) ? { id: response.value.id, state: response.value.state, version: response.value.version, ...jobResponseView(response.value.doc) } : null,
      execution,
      allowed: allowedMethods(order.value.doc),
      retryable: retryableActions(execution),
      audit: auditTrail(history.rows, execution?.interventions)
    }
  })
