import { Context, Effect, Option } from "effect"
import { ReturnStatus } from "@microdcs/job-state"
import { parseTriggerInput, StateMoved, TriggerStore } from "@microdcs/store"
import { refused, succeeded, toResult } from "./Answer.js"
import type { JobControlFailure } from "./JobControlFailure.js"
import { type HandleResult, type JobControlRequest, replyTypeOf, scopeOf } from "./Request.js"

/**
 * The trigger configuration event, in the family of the station
 * configuration events: `...config.trigger.v1`, scope from the `subject`, extension `method` =
 * `PUT` (default: `data` is the trigger, see `parseTriggerInput`; its `scope` may be left out) or
 * `DELETE` (`data.id` names it). Handled by `JobControl` beside the other configuration kinds.
 */
export const TRIGGER_CONFIG_EVENT_TYPE = "com.github.aschamberger.ISA95-JOBCONTROL_V2.config.trigger.v1" as const

/** What changed, for the announcement every instance listens to. */
export interface TriggerChange {
  readonly id: string
  readonly scope: string
  readonly change: "put" | "delete"
  /** The version stored by a put. */
  readonly version?: number | undefined
}

/**
 * Tells the other instances that a trigger changed, besides the nudge the store publishes (the
 * MQTT binding publishes `dag.triggers.changed`). Best effort: it never fails, so a broker that
 * is down never fails an operator's edit. Optional: without it, an edit publishes only the nudge
 * and `TriggerEditRelay` (in a daemon) announces it.
 */
export class TriggerChangeAnnouncer extends Context.Service<
  TriggerChangeAnnouncer,
  { readonly announce: (change: TriggerChange) => Effect.Effect<void> }
>()("@microdcs/job-control/TriggerChangeAnnouncer") {}

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> => typeof value === "object" && value !== null && !Array.isArray(value)

const invalid = (kind: string, message: string, problems?: ReadonlyArray<string>) =>
  refused(ReturnStatus.INVALID_REQUEST, kind, message, problems === undefined ? {} : { Problems: problems })

/**
 * A `data.scope` other than the subject's: refused as `ScopeConflict`, with the row's other
 * problems listed too (checked as if it named the subject's scope), so one answer says everything.
 */
const scopeConflict = (data: Readonly<Record<string, unknown>>, scope: string) => {
  const given = data["scope"]
  if (given === undefined || given === scope) return undefined
  const parsed = parseTriggerInput({ ...data, scope })
  const problems = [`data.scope '${String(given)}' differs from the subject's scope '${scope}'`, ...("problems" in parsed ? parsed.problems : [])]
  return invalid("ScopeConflict", problems.join("; "), problems)
}

/** The handler of {@link TRIGGER_CONFIG_EVENT_TYPE}; needs the store's `TriggerStore`, and takes the announcer when one is provided. */
export const makeTriggerConfig = Effect.gen(function* () {
  const store = yield* TriggerStore
  const announcer = yield* Effect.serviceOption(TriggerChangeAnnouncer)
  const announce = (change: TriggerChange) => Option.match(announcer, { onNone: () => Effect.void, onSome: (a) => a.announce(change) })
  // With an announcer this processor announces its own edits; the nudge says so, and no one relays them.
  const writes = { announced: Option.isSome(announcer) }

  const apply = (request: JobControlRequest) =>
    Effect.gen(function* () {
      const scope = scopeOf(request.subject)
      const method = (request.extensions["method"] ?? "PUT").toUpperCase()
      if (scope === undefined) return invalid("MissingSubject", "the subject must name the scope")
      if (method !== "PUT" && method !== "DELETE") return invalid("InvalidMethod", `method must be PUT or DELETE, got '${request.extensions["method"]}'`)
      if (!isObject(request.data)) return invalid("MalformedPayload", "the trigger configuration must be an object")
      if (method === "DELETE") {
        const id = request.data["id"]
        if (typeof id !== "string" || id === "") return invalid("MalformedPayload", "a DELETE names the trigger in data.id")
        const existing = yield* store.get(id).pipe(
          Effect.map(Option.some),
          Effect.catchTag("NotFound", () => Effect.succeed(Option.none()))
        )
        if (Option.isSome(existing) && existing.value.scope !== scope) {
          return invalid("ScopeConflict", `trigger ${id} belongs to scope '${existing.value.scope}', not '${scope}'`)
        }
        const removed = yield* store.remove(id, writes).pipe(
          Effect.as(1),
          Effect.catchTag("NotFound", () => Effect.succeed(0))
        )
        if (removed === 1) yield* announce({ id, scope, change: "delete" })
        return succeeded({ ID: id, Removed: removed })
      }
      const conflict = scopeConflict(request.data, scope)
      if (conflict !== undefined) return conflict
      const row = yield* store.put({ ...request.data, scope }, writes)
      yield* announce({ id: row.id, scope, change: "put", version: row.version })
      return succeeded({ ID: row.id, Version: row.version })
    }).pipe(
      Effect.catchTags({
        InvalidTrigger: (e) => Effect.succeed(invalid("InvalidTrigger", e.message, e.problems)),
        InvalidInput: (e) => Effect.succeed(invalid("InvalidInput", `${e.field}: ${e.message}`)),
        // Only a write that kept losing to other writers of the same trigger: try again later.
        VersionConflict: (e) => Effect.fail(new StateMoved({ key: e.key, attempts: 5 })),
        NotFound: (e) => Effect.succeed(invalid("UnknownTrigger", e.message))
      })
    )

  /** Applies one trigger configuration request; a bad one is INVALID_REQUEST with every problem, and nothing is stored. */
  const handle = (request: JobControlRequest): Effect.Effect<HandleResult, JobControlFailure> =>
    Effect.map(apply(request), (answer) => toResult(replyTypeOf(request.type), answer))

  return { handle } as const
})
