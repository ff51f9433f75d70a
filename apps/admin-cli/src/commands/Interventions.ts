import { Argument, Command, Flag } from "effect/cli"
import { Effect, Option } from "effect"
import { type Origin, originText } from "@microdcs/job-state"
import { type InterventionInput, type InterventionRefused, MAX_REASON_LENGTH } from "@microdcs/sfc"
import { engineOptionsConfig, type Intervened, interveneStandalone } from "@microdcs/sfc-runtime"
import { actorOption, actorOrigin } from "../Actor.js"
import { confirmDestructive } from "../Confirm.js"
import { Conflict, Missing, UsageError } from "../ExitCode.js"
import { island } from "../Island.js"
import { emit } from "../Output.js"
import { renderFields } from "../Table.js"
import { yesOption } from "../Yes.js"

/**
 * The operator's interventions in a running recipe: skip a step, force a transition, set an
 * action's result, retry an open action. Each goes to the engine as an input through the same
 * loop and CAS write as a station's reply, and is audited: who (`--actor`, default user@host) and
 * why (`--reason`, required) are kept in the execution state's interventions (`executions show`)
 * and in the intervention's node of the execution log (`executions tree`). A refusal changes
 * nothing: bad input exit 2, a name the recipe lacks exit 3, a job or step whose state does not
 * allow it exit 6.
 */

const reasonOption = Flag.String("reason").pipe(Flag.withDescription("why: recorded with who did it in the execution state and its log (required)"))

/** The reason as given; blank or too long is a usage error before anything is asked or written. */
const reasonOf = (reason: string): Effect.Effect<string, UsageError> => {
  if (reason.trim() === "") return Effect.fail(new UsageError({ message: "--reason: say why (it is recorded with who did it)" }))
  if (reason.length > MAX_REASON_LENGTH) return Effect.fail(new UsageError({ message: `--reason: ${reason.length} characters, at most ${MAX_REASON_LENGTH}` }))
  return Effect.succeed(reason)
}

/** A refusal as the CLI's exit codes: invalid input 2, an unknown name 3, a state that does not allow it 6. */
const refusalError = (refused: InterventionRefused) => {
  const message = refused.message
  if (refused.kind === "invalid") return new UsageError({ message })
  return refused.kind === "unknown" ? new Missing({ message }) : new Conflict({ message })
}

/** A value of the result as one field of the human output: objects as JSON. */
const fieldText = (value: unknown): string | number | undefined =>
  typeof value === "string" || typeof value === "number" ? value : value === null || value === undefined ? undefined : JSON.stringify(value)

interface Audited {
  readonly jobId: string
  readonly actor: Option.Option<string>
  readonly reason: string
  readonly yes: boolean
}

/** Checks, asks, applies and prints one intervention; `extra` adds what the command's output shows. */
const runIntervention = (
  o: Audited,
  question: string,
  inputOf: (audit: { readonly origin: Origin; readonly reason: string }) => InterventionInput,
  extra: (done: Intervened) => Record<string, unknown> = () => ({})
) =>
  island(
    Effect.gen(function* () {
      const origin = yield* actorOrigin(o.actor)
      const reason = yield* reasonOf(o.reason)
      const options = yield* engineOptionsConfig
      yield* confirmDestructive(o.yes, question)
      const input = inputOf({ origin, reason })
      // The CLI runs no engine: the intervention runs with services of its own, its log node written as the `SFC_EXECUTION_LOG*` settings say.
      const done = yield* interveneStandalone(options, o.jobId, input).pipe(
        Effect.catchTags({
          InterventionRefused: (refused) => Effect.fail(refusalError(refused)),
          ExecutionNotFound: (e) => Effect.fail(new Missing({ message: e.message }))
        })
      )
      const { state } = done.output
      const result = {
        jobId: o.jobId, intervention: input.type, by: origin, reason, ...extra(done),
        status: state.status, activeSteps: state.active.map((a) => a.step), version: done.version
      }
      yield* emit(result, () => renderFields(Object.entries({ ...result, by: originText(origin) }).map(([label, value]) => [label, fieldText(value)])))
    })
  )

const audited = { jobId: Argument.String("job-id"), reason: reasonOption, actor: actorOption, yes: yesOption }

const skipStep = Command.make(
  "skip-step",
  { ...audited, step: Argument.String("step"), to: Flag.String("to").pipe(Flag.withDescription("the target: one of the step's transitions leads there (needed when it has several)"), Flag.optional) },
  (o) =>
    runIntervention(o, `Skip step ${o.step} of job ${o.jobId}, abandoning its open actions?`, (audit) => ({
      type: "skip-step", ...audit, step: o.step, ...(Option.isSome(o.to) ? { target: o.to.value } : {})
    }), () => ({ step: o.step, target: Option.getOrNull(o.to) }))
).pipe(Command.withDescription("leave an active step as if its transition fired; its open actions are abandoned (asks for confirmation)"))

const forceTransition = Command.make(
  "force-transition",
  {
    ...audited,
    from: Flag.String("from").pipe(Flag.withDescription("the transition's source step (with --to)"), Flag.optional),
    to: Flag.String("to").pipe(Flag.withDescription("the transition's target (with --from)"), Flag.optional),
    index: Flag.Int("index").pipe(Flag.withDescription("the transition's place in the recipe's Transitions, from 0 (instead of --from/--to)"), Flag.optional)
  },
  (o) =>
    Effect.gen(function* () {
      const byNames = Option.isSome(o.from) && Option.isSome(o.to)
      if (byNames === Option.isSome(o.index) || Option.isSome(o.from) !== Option.isSome(o.to)) {
        return yield* new UsageError({ message: "name the transition by --from and --to, or by --index, not both" })
      }
      const transition = byNames ? { source: Option.getOrThrow(o.from), target: Option.getOrThrow(o.to) } : { index: Option.getOrThrow(o.index) }
      const named = "index" in transition ? `transition ${transition.index}` : `transition ${transition.source} -> ${transition.target}`
      return yield* runIntervention(o, `Force ${named} of job ${o.jobId}, regardless of its condition?`, (audit) => ({ type: "force-transition", ...audit, transition }), () => ({ transition }))
    })
).pipe(Command.withDescription("take a transition out of an active step regardless of its condition (asks for confirmation)"))

const setResult = Command.make(
  "set-result",
  { ...audited, action: Argument.String("action"), result: Flag.String("result").pipe(Flag.withDescription("the result as JSON (null for none)")) },
  (o) =>
    Effect.gen(function* () {
      const result = yield* Effect.try({ try: () => JSON.parse(o.result) as unknown, catch: () => new UsageError({ message: `--result: not JSON: ${o.result}` }) })
      return yield* runIntervention(o, `Set the result of action ${o.action} of job ${o.jobId}?`, (audit) => ({ type: "set-result", ...audit, action: o.action, result }), () => ({ action: o.action, result }))
    })
).pipe(Command.withDescription("set an action's result (an open action completes with it); the step's transitions follow (asks for confirmation)"))

/**
 * An open action tried again, for a station that was unreachable and is back: its command goes
 * out now as the next attempt (same correlation id) with the send budget counted afresh; a pull
 * event's timeout starts over. A failed action already ended its job, which stays ended.
 */
const retryAction = Command.make("retry-action", { ...audited, action: Argument.String("action") }, (o) =>
  runIntervention(o, `Send action ${o.action} of job ${o.jobId} to the station again now?`, (audit) => ({ type: "retry", ...audit, action: o.action }), (done) => {
    const command = done.output.outbox.find((e) => e.type === "command")
    return { action: o.action, attempt: command?.type === "command" ? command.attempt : null }
  })
).pipe(Command.withDescription("send an open action's command again now, with a fresh send budget (asks for confirmation)"))

/** `executions skip-step|force-transition|set-result|retry-action`. */
export const interventionCommands = [skipStep, forceTransition, setResult, retryAction]
