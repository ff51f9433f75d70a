import { Argument, Command, Flag } from "effect/cli"
import { randomUUID } from "node:crypto"
import { Effect, Option } from "effect"
import { jobControlLayer, JobControl } from "@microdcs/job-control"
import { isSuccess, methodEventType, ReturnStatus, type Method } from "@microdcs/job-state"
import { actorOption, actorOrigin } from "../Actor.js"
import { confirmDestructive } from "../Confirm.js"
import { Conflict, Missing } from "../ExitCode.js"
import { island } from "../Island.js"
import { emit } from "../Output.js"
import { renderFields } from "../Table.js"
import { yesOption } from "../Yes.js"

/**
 * The operator's job actions: the same state methods an MES sends, run through the same
 * job-control processor (one versioned put with the method as the change word), so the engine,
 * the publisher and the history see an operator's Abort as an MES's, except for who did it: the
 * write's origin is the operator (`cli:alice@host`, `--actor`), named in the history and the
 * execution log. Only the status event is not sent: the CLI talks to Valkey, not to the broker;
 * the publisher's retained order topic still follows the change.
 */
interface Action {
  readonly name: string
  readonly method: Exclude<Method, "Store" | "StoreAndStart" | "Update">
  readonly description: string
  /** Ends or discards work: asks for confirmation unless --yes. */
  readonly destructive: boolean
}

const actions: ReadonlyArray<Action> = [
  { name: "start", method: "Start", description: "allow a stored job order to start", destructive: false },
  { name: "revoke-start", method: "RevokeStart", description: "take back the permission to start", destructive: false },
  { name: "pause", method: "Pause", description: "suspend a running job (its commands are held back)", destructive: false },
  { name: "resume", method: "Resume", description: "resume an interrupted job", destructive: false },
  { name: "stop", method: "Stop", description: "end a running or interrupted job as completed (destructive)", destructive: true },
  { name: "abort", method: "Abort", description: "abort a job that has not ended (destructive)", destructive: true },
  { name: "cancel", method: "Cancel", description: "cancel a job order that has not started (destructive)", destructive: true },
  { name: "clear", method: "Clear", description: "clear an ended or aborted job order from its scope (destructive)", destructive: true }
]

const actionCommand = (action: Action) =>
  Command.make(
    action.name,
    {
      id: Argument.String("job-order-id"),
      scope: Flag.String("scope").pipe(Flag.withDescription("the job order's scope")),
      comment: Flag.String("comment").pipe(Flag.withDescription("a comment stored with the transition"), Flag.optional),
      actor: actorOption,
      yes: yesOption
    },
    (o) =>
      island(
        Effect.gen(function* () {
          const origin = yield* actorOrigin(o.actor)
          if (action.destructive) yield* confirmDestructive(o.yes, `${action.method} job order ${o.id} in scope ${o.scope}?`)
          const jobControl = yield* JobControl
          const { reply, statusEvents } = yield* jobControl.handle({
            id: randomUUID(),
            source: "microdcs-admin",
            type: methodEventType(action.method),
            subject: o.scope,
            data: { JobOrderID: o.id, ...(Option.isSome(o.comment) ? { Comment: o.comment.value } : {}) },
            extensions: {},
            origin
          })
          if (!isSuccess(reply.status)) {
            const message = `${action.method} ${o.id}: ${reply.error?.message ?? `return status ${reply.status}`}`
            return yield* reply.status === ReturnStatus.UNKNOWN_JOB_ORDER_ID ? new Missing({ message }) : new Conflict({ message })
          }
          const moved = statusEvents[0]
          const result = { id: o.id, scope: o.scope, method: action.method, state: moved?.state ?? null, version: moved?.version ?? null }
          yield* emit(result, () =>
            renderFields([
              ["job order", result.id],
              ["method", result.method],
              ["state", result.state],
              ["version", result.version]
            ])
          )
        }).pipe(Effect.provide(jobControlLayer()))
      )
  ).pipe(Command.withDescription(action.description))

/** `joborders start|revoke-start|pause|resume|stop|abort|cancel|clear <id> --scope S`. */
export const jobOrderActionCommands = actions.map(actionCommand)
