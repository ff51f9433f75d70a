import { HttpRouter } from "effect/http"
import { Effect } from "effect"
import { ExecutionLookup } from "@microdcs/execution-log"
import { tokenRoute } from "./HttpAccess.js"
import { type Reply, storeReadReply } from "./HttpStoreReply.js"

/**
 * A log route's answer: nothing logged under the id is 404, a refused id 400, a value that does
 * not decode 500 naming its key, an unreachable Valkey or database 503.
 */
export const logReply = storeReadReply({ notFound: "NoExecutionLog", corrupt: "LogRecordInvalid", corruptName: "corrupt-log" })

const tree = Effect.gen(function* () {
  const id = (yield* HttpRouter.params)["id"] ?? ""
  const lookup = yield* ExecutionLookup
  const found = yield* lookup.tree(id)
  return { status: 200, body: { ...found, storage: lookup.searchesStorage ? "postgres" : "valkey-only" } } satisfies Reply
})

/**
 * The execution log tree in the JSON API: `{id}` is an execution id, or a
 * job id whose top-level executions are shown one after the other. `rows` are flat, each with
 * its `depth`: a client indents and draws nothing else.
 *
 *   GET /api/executions/{id}/tree
 */
export const executionRoutes = [tokenRoute("/api/executions/:id/tree", logReply(tree))] as const
