import { Context, Effect, Layer } from "effect"
import { InvalidInput, type ConnectionError, type WrongType } from "./Errors.js"
import { type JobResponseDocument, JobResponseDao } from "./JobResponseDao.js"
import { typedCommand } from "./TypeGuard.js"
import { Valkey, type ValkeyService } from "./Valkey.js"

/** Where a page of failures starts: strictly older than `at` (epoch ms), or as old with a smaller id. */
export interface FailureCursor {
  readonly at: number
  readonly id: string
}

/** A job response in a failure state, with its end time (the failed set's score). */
export interface FailedResponse {
  readonly at: number
  readonly response: JobResponseDocument
}

/** Above this many responses ending in one millisecond, a cursor on that millisecond skips the rest of them. */
const MAX_TIES = 1000

/** Newest first: by end time, then by id, both descending. */
const beforeCursor = (cursor: FailureCursor | undefined, at: number, id: string): boolean =>
  cursor === undefined || at < cursor.at || (at === cursor.at && id < cursor.id)

const pageProblems = (limit: number, before: FailureCursor | undefined): ReadonlyArray<string> => [
  ...(Number.isSafeInteger(limit) && limit > 0 && limit <= 1000 ? [] : [`limit must be an integer from 1 to 1000, got ${limit}`]),
  ...(before === undefined || Number.isFinite(before.at) ? [] : [`the cursor's time must be a number, got ${before.at}`])
]

/** One page of ids and scores from the failed set, newest first, from `before` on: O(log n + page + ties). */
const failedIds = (valkey: ValkeyService, key: string, limit: number, before: FailureCursor | undefined) =>
  Effect.gen(function* () {
    const max = before === undefined ? "+inf" : String(before.at)
    const ties = before === undefined ? 0 : yield* typedCommand(valkey, "count failed ties", key, "zset", (c) => c.zcount(key, max, max))
    const flat = yield* typedCommand(valkey, "page failed jobresponses", key, "zset", (c) =>
      c.zrange(key, max, "-inf", "BYSCORE", "REV", "LIMIT", 0, limit + Math.min(ties, MAX_TIES), "WITHSCORES")
    )
    const page: Array<{ readonly id: string; readonly at: number }> = []
    for (let i = 0; i < flat.length && page.length < limit; i += 2) {
      const id = flat[i]!
      const at = Number(flat[i + 1])
      if (beforeCursor(before, at, id)) page.push({ id, at })
    }
    return page
  })

/**
 * The job responses of a scope in a failure state (Aborted), newest end time first, read from
 * the `jobresponse:failed:{scope}` set the write scripts keep: a page costs one ZCOUNT, one ZRANGE
 * and one read of the page's documents, however many responses the scope holds.
 */
export class JobResponseFailures extends Context.Service<JobResponseFailures>()("@microdcs/store/JobResponseFailures", {
  make: Effect.gen(function* () {
    const valkey = yield* Valkey
    const responses = yield* JobResponseDao
    const page = (
      scope: string,
      options: { readonly limit: number; readonly before?: FailureCursor | undefined }
    ): Effect.Effect<ReadonlyArray<FailedResponse>, WrongType | InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        const problems = pageProblems(options.limit, options.before)
        if (problems.length > 0) return yield* new InvalidInput({ field: "page", message: problems.join("; ") })
        const key = yield* valkey.key("jobResponseFailed", { scope })
        const ids = yield* failedIds(valkey, key, options.limit, options.before)
        const documents = new Map((yield* responses.getMany(ids.map((i) => i.id))).map((d) => [d.id, d] as const))
        // A response deleted between the two reads is left out of the page.
        return ids.flatMap(({ id, at }) => {
          const response = documents.get(id)
          return response === undefined ? [] : [{ at, response }]
        })
      })
    /** How many responses of the scope are in a failure state (ZCARD). */
    const count = (scope: string): Effect.Effect<number, WrongType | InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        const key = yield* valkey.key("jobResponseFailed", { scope })
        return yield* typedCommand(valkey, "count failed jobresponses", key, "zset", (c) => c.zcard(key))
      })
    return { page, count } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies.pipe(Layer.provide(JobResponseDao.Default))
}
