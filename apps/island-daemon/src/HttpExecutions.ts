import { HttpRouter } from "@effect/platform"
import { Effect } from "effect"
import { ExecutionLookup } from "@microdcs/execution-log"
import { InvalidInput } from "@microdcs/store"
import { requireToken } from "./HttpAccess.js"
import { withIsland } from "./HttpContext.js"
import { jsonReply } from "./HttpReply.js"

interface Reply {
  readonly status: number
  readonly body: unknown
}

/**
 * A log route's answer over the running island (503 while it starts or stops): nothing logged
 * under the id is 404, a refused id 400, a value that does not decode 500 naming its key, an
 * unreachable Valkey or database 503.
 */
export const logReply = <E extends { readonly _tag: string; readonly message?: string }, R>(answer: Effect.Effect<Reply, E, R>) =>
  withIsland(
    answer.pipe(
      Effect.catchAll((e) =>
        Effect.succeed<Reply>(
          e._tag === "NoExecutionLog"
            ? { status: 404, body: { error: "not-found", message: e.message } }
            : e instanceof InvalidInput
              ? { status: 400, body: { error: "bad-request", message: `${e.field}: ${e.message}` } }
              : e._tag === "LogRecordInvalid"
                ? { status: 500, body: { error: "corrupt-log", message: e.message } }
                : { status: 503, body: { error: e._tag, message: "store unavailable" } }
        )
      ),
      Effect.flatMap((reply) => jsonReply(reply.status, reply.body))
    )
  )

const tree = Effect.gen(function* () {
  const id = (yield* HttpRouter.params)["id"] ?? ""
  const lookup = yield* ExecutionLookup
  const found = yield* lookup.tree(id)
  return { status: 200, body: { ...found, storage: lookup.searchesStorage ? "postgres" : "valkey-only" } } satisfies Reply
})

/**
 * The execution log tree (execution-log.md §3) in the JSON API: `{id}` is an execution id, or a
 * job id whose top-level executions are shown one after the other. `rows` are flat, each with
 * its `depth`: a client indents and draws nothing else.
 *
 *   GET /api/executions/{id}/tree
 */
export const executionRoutes = HttpRouter.empty.pipe(HttpRouter.get("/api/executions/:id/tree", logReply(tree)), HttpRouter.use(requireToken))
