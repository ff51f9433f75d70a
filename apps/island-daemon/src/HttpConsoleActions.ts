import { HttpIncomingMessage, HttpServerRequest } from "effect/http"
import { ByteSize, Effect } from "effect"
import { type Origin, withComment, withFrom } from "@microdcs/job-state"
import { DeadLetterRedrive } from "@microdcs/store"
import { ActionRefused, consoleMethods, isConsoleMethod, retryJobAction, runJobAction } from "./ConsoleActions.js"
import { HttpCaller } from "./HttpAccess.js"
import { badRequest, type ConsoleReply, consoleReply, ok, param } from "./HttpConsoleReply.js"
import { actionRoute } from "./HttpWriteGuard.js"

/** The largest action body read: a comment and a few names. */
const MAX_BODY_BYTES = 16 * 1024

/** The request's JSON body as an object, or the problem with it. */
export const jsonBody = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const length = Number(request.headers["content-length"] ?? "0")
  if (length > MAX_BODY_BYTES) return { problem: `the body is ${length} bytes, at most ${MAX_BODY_BYTES}` }
  // Read with a bound also when no length was sent (a chunked body): a longer one fails the read.
  const text = yield* request.text.pipe(
    Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(MAX_BODY_BYTES)),
    Effect.orElseSucceed(() => undefined)
  )
  if (text === undefined) return { problem: "the body could not be read" }
  if (text.length > MAX_BODY_BYTES) return { problem: `the body is longer than ${MAX_BODY_BYTES} bytes` }
  if (text.trim() === "") return { body: {} as Record<string, unknown> }
  try {
    const body = JSON.parse(text) as unknown
    return typeof body === "object" && body !== null && !Array.isArray(body) ? { body: body as Record<string, unknown> } : { problem: "the body must be a JSON object" }
  } catch {
    return { problem: "the body is not JSON" }
  }
})

/** An optional text field of the body: its value, or the problem. */
export const textField = (body: Record<string, unknown>, name: string, problems: Array<string>): string | undefined => {
  const value = body[name]
  if (value === undefined || value === null) return undefined
  if (typeof value !== "string") problems.push(`${name} must be a string`)
  return typeof value === "string" ? value : undefined
}

/** The caller as the audit trail names it: `console:{user}` from its address, with the comment. */
export const callerOrigin = (comment: string | undefined) =>
  Effect.map(HttpCaller, (caller): Origin => withComment(withFrom({ kind: "console", id: caller.user }, caller.from), comment))

export const refusal = (e: ActionRefused): ConsoleReply => ({ status: e.status, body: { error: e.code, message: e.message } })

/** Reads the body's fields (every problem at once), then runs `act` with them; a refusal answers with its code. */
const withBody = <A, E, R>(fields: ReadonlyArray<string>, act: (values: Readonly<Record<string, string | undefined>>) => Effect.Effect<A, ActionRefused | E, R>) =>
  Effect.gen(function* () {
    const read = yield* jsonBody
    if (read.body === undefined) return badRequest(read.problem)
    const problems: Array<string> = []
    const unknown = Object.keys(read.body).filter((k) => !fields.includes(k))
    if (unknown.length > 0) problems.push(`unknown field${unknown.length === 1 ? "" : "s"} ${unknown.join(", ")}: the fields are ${fields.join(", ")}`)
    const values = Object.fromEntries(fields.map((f) => [f, textField(read.body, f, problems)]))
    if (problems.length > 0) return badRequest(problems.join("; "))
    return yield* act(values).pipe(
      Effect.map((done) => ok({ ok: true, ...done })),
      Effect.catchIf((e): e is ActionRefused => e instanceof ActionRefused, (e) => Effect.succeed(refusal(e)))
    )
  })

const jobMethod = Effect.gen(function* () {
  const id = yield* param("id")
  const method = yield* param("method")
  if (!isConsoleMethod(method)) return { status: 404, body: { error: "unknown-method", message: `${method} is not one of ${consoleMethods.join(", ")}` } }
  return yield* withBody(["scope", "comment"], (b) =>
    Effect.flatMap(callerOrigin(b["comment"]), (origin) => runJobAction({ id, method, scope: b["scope"], comment: b["comment"], origin }))
  )
})

const retry = Effect.gen(function* () {
  const id = yield* param("id")
  return yield* withBody(["action", "comment"], (b) =>
    Effect.flatMap(callerOrigin(undefined), (origin) =>
      b["action"] === undefined || b["action"] === ""
        ? Effect.fail(new ActionRefused({ code: "invalid", status: 400, message: "action: name the action to retry" }))
        : retryJobAction({ id, action: b["action"], origin, reason: b["comment"] ?? "" })
    )
  )
})

/** Who redrove, from where and why, in the daemon's log (a redrive writes no change entry of a job). */
const logRedrive = (what: string, scope: string, stream: string, comment: string | undefined, redriven: number) =>
  Effect.flatMap(HttpCaller, (caller) =>
    Effect.logInfo("dead letters redriven from the console").pipe(
      Effect.annotateLogs({ by: `console:${caller.user}`, from: caller.from ?? "", what, scope, stream, comment: comment ?? "", redriven })
    )
  )

const unknownDeadLetter = (e: { readonly message: string }) => Effect.fail(new ActionRefused({ code: "unknown-dead-letter", status: 404, message: e.message }))
const invalid = (e: { readonly field: string; readonly message: string }) => Effect.fail(new ActionRefused({ code: "invalid", status: 400, message: `${e.field}: ${e.message}` }))

const redriveOne = Effect.gen(function* () {
  const scope = yield* param("scope")
  const stream = yield* param("stream")
  const entry = yield* param("entry")
  return yield* withBody(["comment"], (b) =>
    Effect.gen(function* () {
      const outcome = yield* Effect.flatMap(DeadLetterRedrive, (r) => r.redrive(stream, scope, entry)).pipe(Effect.catchTags({ NotFound: unknownDeadLetter, InvalidInput: invalid }))
      const redriven = outcome.status === "redriven" ? 1 : 0
      yield* logRedrive(entry, scope, stream, b["comment"], redriven)
      return { scope, stream, redriven, skipped: 1 - redriven, outcomes: [outcome] }
    })
  )
})

const redriveAll = Effect.gen(function* () {
  const scope = yield* param("scope")
  const stream = yield* param("stream")
  return yield* withBody(["comment"], (b) =>
    Effect.gen(function* () {
      const summary = yield* Effect.flatMap(DeadLetterRedrive, (r) => r.redriveAll(stream, scope)).pipe(Effect.catchTag("InvalidInput", invalid))
      yield* logRedrive("all", scope, stream, b["comment"], summary.redriven)
      return { scope, stream, ...summary }
    })
  )
})

/**
 * The console's actions: POSTs with an operator's token from a page of this server, a JSON body;
 * every answer JSON (`{ok: true, ...}` or `{error, message}`).
 *
 *   POST /api/console/jobs/{id}/actions/{method}     {scope?, comment?}   Start ... Clear
 *   POST /api/console/jobs/{id}/retry                {action, comment}    an open action's command again
 *   POST /api/console/scopes/{scope}/streams/{stream}/deadletters/{entry}/redrive    {comment?}
 *   POST /api/console/scopes/{scope}/streams/{stream}/deadletters/redrive-all         {comment?}
 */
export const consoleActionRoutes = [
  actionRoute("/api/console/jobs/:id/actions/:method", consoleReply(jobMethod)),
  actionRoute("/api/console/jobs/:id/retry", consoleReply(retry)),
  actionRoute("/api/console/scopes/:scope/streams/:stream/deadletters/:entry/redrive", consoleReply(redriveOne)),
  actionRoute("/api/console/scopes/:scope/streams/:stream/deadletters/redrive-all", consoleReply(redriveAll))
] as const
