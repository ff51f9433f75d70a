import { randomUUID } from "node:crypto"
import { Context, Data, Effect } from "effect"
import { JobControl } from "@microdcs/job-control"
import { hasBit, isSuccess, type Method, methodEventType, type Origin, ReturnStatus, statusNames } from "@microdcs/job-state"
import { JobOrderDao } from "@microdcs/store"
import { type EngineOptions, interveneStandalone } from "@microdcs/sfc-runtime"

/**
 * The console's actions on one job: the same state methods an MES sends, through the same
 * job-control processor (one versioned put, the method as the change word, the console user as
 * the origin), and a retry of an open action through the engine's input path, like the admin
 * CLI's. A refused action changes nothing and says why with a stable `code`. Bulk actions call
 * `runJobAction` once per job.
 */

/** The methods the console offers on a job (Store, StoreAndStart and Update need a document: the MES's). */
export const consoleMethods = ["Start", "RevokeStart", "Pause", "Resume", "Stop", "Abort", "Cancel", "Clear"] as const satisfies ReadonlyArray<Method>
export type ConsoleMethod = (typeof consoleMethods)[number]
/** Methods that end or discard work: the page asks before it sends them. */
export const destructiveMethods: ReadonlyArray<ConsoleMethod> = ["Stop", "Abort", "Cancel", "Clear"]

export const isConsoleMethod = (name: string): name is ConsoleMethod => (consoleMethods as ReadonlyArray<string>).includes(name)

/** The longest comment an action takes. */
export const MAX_ACTION_COMMENT = 1000

/**
 * Why an action was not done; nothing changed. `code`: `unknown-job`, `state-refuses` (the job's
 * state does not allow the method), `refused` (job control refused it otherwise), `invalid`,
 * `no-execution`, `unknown-action`, `engine-refuses`. `status`: the HTTP status it answers with.
 */
export class ActionRefused extends Data.TaggedError("ActionRefused")<{ readonly code: string; readonly status: number; readonly message: string }> {}

/** The engine's log settings a retry writes its log node with (the daemon's `SFC_EXECUTION_LOG*`). */
export class ActionSettings extends Context.Service<
  ActionSettings,
  { readonly log: Pick<EngineOptions, "executionLog" | "executionLogCap" | "executionLogQueueSize" | "executionLogDetailBytes"> }
>()("@microdcs/island-daemon/ActionSettings") {}

export interface JobAction {
  /** The job order's scope; looked up by id when absent. */
  readonly scope?: string | undefined
  readonly id: string
  readonly method: ConsoleMethod
  /** Who acts, from where (`{kind: "console", id: user, from: address}`). */
  readonly origin: Origin
  readonly comment?: string | undefined
}

export interface JobActionDone {
  readonly id: string
  readonly scope: string
  readonly method: ConsoleMethod
  /** The state the job order moved to, and its version after the write. */
  readonly state: string | null
  readonly version: number | null
}

const refused = (code: string, status: number, message: string) => new ActionRefused({ code, status, message })

/** The job order's scope: as given, else where the store keeps it. */
const scopeOf = (action: JobAction) =>
  action.scope !== undefined
    ? Effect.succeed(action.scope)
    : Effect.flatMap(JobOrderDao, (dao) => dao.get(action.id)).pipe(
        Effect.map((doc) => doc.scope),
        Effect.catchTag("NotFound", () => Effect.fail(refused("unknown-job", 404, `job order ${action.id} does not exist`)))
      )

/** A reply that is not NO_ERROR, as the refusal it stands for. */
const refusalOf = (action: JobAction, status: number, message: string | undefined): ActionRefused => {
  const why = `${action.method} ${action.id}: ${message ?? statusNames(status).join(", ")}`
  if (hasBit(status, ReturnStatus.UNKNOWN_JOB_ORDER_ID)) return refused("unknown-job", 404, why)
  if (hasBit(status, ReturnStatus.INVALID_JOB_ORDER_STATUS)) return refused("state-refuses", 409, why)
  if (hasBit(status, ReturnStatus.INVALID_REQUEST)) return refused("invalid", 400, why)
  return refused("refused", 409, why)
}

/**
 * Runs one state method on one job order through the job-control processor, as the admin CLI
 * does: the write's origin is `action.origin` with the comment. Fails with `ActionRefused` when
 * the job is unknown or its state does not allow the method (nothing written then).
 */
export const runJobAction = (action: JobAction) =>
  Effect.gen(function* () {
    if (!isConsoleMethod(action.method)) return yield* refused("invalid", 400, `${String(action.method)} is not one of ${consoleMethods.join(", ")}`)
    if (action.comment !== undefined && action.comment.length > MAX_ACTION_COMMENT) {
      return yield* refused("invalid", 400, `the comment is ${action.comment.length} characters long, at most ${MAX_ACTION_COMMENT}`)
    }
    const scope = yield* scopeOf(action)
    const { reply, statusEvents } = yield* (yield* JobControl).handle({
      id: randomUUID(),
      source: "microdcs-console",
      type: methodEventType(action.method),
      subject: scope,
      data: { JobOrderID: action.id, ...(action.comment !== undefined && action.comment !== "" ? { Comment: action.comment } : {}) },
      extensions: {},
      origin: action.origin
    })
    if (!isSuccess(reply.status)) return yield* refusalOf(action, reply.status, reply.error?.message)
    const moved = statusEvents[0]
    return { id: action.id, scope, method: action.method, state: moved?.state ?? null, version: moved?.version ?? null } satisfies JobActionDone
  })

/**
 * Sends an open action's command again now (the engine's retry input, as the CLI's
 * `executions retry-action`), audited with `origin` and `reason` in the execution state and its
 * log node. Refused (nothing written) when the job has no execution, the recipe no such action,
 * or the action is not open.
 */
export const retryJobAction = (input: { readonly id: string; readonly action: string; readonly origin: Origin; readonly reason: string }) =>
  Effect.gen(function* () {
    if (input.reason.trim() === "") return yield* refused("invalid", 400, "say why in the comment (it is recorded with who did it)")
    if (input.reason.length > MAX_ACTION_COMMENT) return yield* refused("invalid", 400, `the comment is ${input.reason.length} characters long, at most ${MAX_ACTION_COMMENT}`)
    const { log } = yield* ActionSettings
    const done = yield* interveneStandalone(log, input.id, { type: "retry", origin: input.origin, reason: input.reason, action: input.action }).pipe(
      Effect.catchTags({
        InterventionRefused: (e) => Effect.fail(e.kind === "invalid" ? refused("invalid", 400, e.message) : e.kind === "unknown" ? refused("unknown-action", 404, e.message) : refused("engine-refuses", 409, e.message)),
        ExecutionNotFound: (e) => Effect.fail(refused("no-execution", 404, e.message))
      })
    )
    const command = done.output.outbox.find((e) => e.type === "command")
    return { id: input.id, action: input.action, status: done.output.state.status, attempt: command?.type === "command" ? command.attempt : null, version: done.version }
  })
