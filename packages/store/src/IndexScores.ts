import { Effect, Option, Context, Layer } from "effect"
import type { ConnectionError, InvalidInput, WrongType } from "./Errors.js"
import { validateText } from "./Input.js"
import { typedCommand } from "./TypeGuard.js"
import { Valkey } from "./Valkey.js"

/**
 * The score of one member of a scope's sorted-set index, for callers that hold the member and
 * need its place: a job order's priority in `joborder:list:{scope}`, an execution's next
 * deadline in `sfc:due:{scope}`. None when it is not in the index.
 */
export class IndexScores extends Context.Service<IndexScores>()("@microdcs/store/IndexScores", {
  make: Effect.gen(function* () {
    const valkey = yield* Valkey

    const scoreIn = (operation: string, key: string, field: string, member: string) =>
      Effect.gen(function* () {
        yield* validateText(field, member)
        const score = yield* typedCommand(valkey, operation, key, "zset", (c) => c.zscore(key, member))
        return score === null ? Option.none<number>() : Option.some(Number(score))
      })

    /** The priority a job order is listed with in its scope. */
    const jobOrderPriority = (scope: string, id: string): Effect.Effect<Option.Option<number>, WrongType | InvalidInput | ConnectionError> =>
      Effect.flatMap(valkey.key("jobOrderList", { scope }), (key) => scoreIn("job order priority", key, "id", id))

    /** The next deadline (epoch ms) of an execution in its scope's due index. */
    const sfcDeadline = (scope: string, jobId: string): Effect.Effect<Option.Option<number>, WrongType | InvalidInput | ConnectionError> =>
      Effect.flatMap(valkey.key("sfcDue", { scope }), (key) => scoreIn("sfc deadline", key, "jobId", jobId))

    return { jobOrderPriority, sfcDeadline } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
