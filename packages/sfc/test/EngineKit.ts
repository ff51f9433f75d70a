import { Result } from "effect"
import {
  type ActionRun,
  type CounterNeed,
  type CounterValues,
  type EngineInput,
  type EngineOutput,
  type ExecutionState,
  type OutboxEntry,
  type Recipe,
  start,
  type StartParams,
  step,
  validateRecipe
} from "@microdcs/sfc"
import { recipeBuilders } from "../src/testing.js"

/** Shared pieces of the engine tests (not a test file itself). */

export const T0 = 1_700_000_000_000
export const JOB = "job-1"
export const SCOPE = "line-1"
/** Who intervenes and why, for the operator's inputs (skip, force, set a result, retry). */
export const AUDIT = { origin: { kind: "cli", id: "alice@host" }, reason: "station was down" } as const

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** A recipe from JSON, validated like a stored work master's; a test with a broken recipe throws. */
export const recipeOf = (json: unknown): Recipe => {
  const result = validateRecipe(json)
  if (Result.isFailure(result)) throw new Error(`invalid test recipe: ${result.failure.map((p) => p.message).join("; ")}`)
  return result.success
}

/** A recipe of schema v1.1.0 from JSON (waiting transitions, time limits). */
export const recipeV11 = (json: object): Recipe => recipeOf({ ...json, SchemaVersion: "1.1.0" })

const builders = recipeBuilders("")
export const { stepJson, transition, push, pull } = builders

/** A linear recipe: the steps in order, each with the actions given for it. */
export const linear = (steps: ReadonlyArray<string>, actions: ReadonlyArray<object>, extra: Record<string, unknown> = {}): Recipe =>
  recipeOf(builders.linearJson(steps, actions, extra))

/**
 * The reference `stepAll` must equal: `step` over the inputs, each on the state the one before
 * left, every call with the same `freshExecutionId` (it only takes effect while the state has no log).
 */
export const foldStep = (
  state: ExecutionState,
  inputs: ReadonlyArray<EngineInput>,
  now: number,
  freshExecutionId?: string,
  call: (state: ExecutionState, input: EngineInput) => EngineOutput = (s, input) => step(s, input, now, freshExecutionId)
): { readonly state: ExecutionState; readonly outputs: ReadonlyArray<EngineOutput> } => {
  const outputs: Array<EngineOutput> = []
  let current = state
  for (const input of inputs) {
    const out = call(current, input)
    outputs.push(out)
    current = out.state
  }
  return { state: current, outputs }
}

/**
 * The runtime's counter loop: call, read what the output's `needsCounters` names, append the
 * values, call again. `read` answers each need; `needs` are the needs in the order they came.
 */
export const withCounters = <A>(
  call: (counters: ReadonlyArray<CounterValues>) => A,
  needOf: (result: A) => CounterNeed | undefined,
  read: (need: CounterNeed) => CounterValues
): { readonly result: A; readonly needs: ReadonlyArray<CounterNeed>; readonly stops: ReadonlyArray<A> } => {
  const values: Array<CounterValues> = []
  const needs: Array<CounterNeed> = []
  const stops: Array<A> = []
  let result = call(values)
  for (let need = needOf(result); need !== undefined; need = needOf(result)) {
    needs.push(need)
    stops.push(result)
    values.push(read(need))
    result = call(values)
  }
  return { result, needs, stops }
}

export const entriesOf = <T extends OutboxEntry["type"]>(out: { readonly outbox: ReadonlyArray<OutboxEntry> }, type: T) =>
  out.outbox.filter((e): e is Extract<OutboxEntry, { type: T }> => e.type === type)

/** Drives one job through the core as the runtime would: every state goes through JSON in between. */
export class Job {
  state: ExecutionState
  readonly outputs: Array<EngineOutput> = []

  constructor(recipe: Recipe, now = T0, params: Partial<StartParams> = {}) {
    const out = start({ jobId: JOB, scope: SCOPE, workMasterId: "wm-1", recipe, ...params }, now)
    this.outputs.push(out)
    this.state = JSON.parse(JSON.stringify(out.state)) as ExecutionState
  }

  get last(): EngineOutput {
    return this.outputs[this.outputs.length - 1]!
  }

  apply(input: EngineInput, now: number): EngineOutput {
    return this.applyReading(input, now, () => {
      throw new Error("no counters in this test")
    })
  }

  /** `apply` through the runtime's counter loop: `read` answers each need, `needs` collects them. */
  applyReading(input: EngineInput, now: number, read: (need: CounterNeed) => CounterValues, needs: Array<CounterNeed> = []): EngineOutput {
    const run = withCounters((values) => step(this.state, input, now, undefined, values), (o) => o.needsCounters, read)
    needs.push(...run.needs)
    this.outputs.push(run.result)
    this.state = JSON.parse(JSON.stringify(run.result.state)) as ExecutionState
    return run.result
  }

  /** The open run of an action (dispatched or waiting); throws when there is none. */
  open(action: string): ActionRun {
    const run = this.state.actions.find((r) => r.action === action && (r.state === "dispatched" || r.state === "waiting"))
    if (!run) throw new Error(`action ${action} is not open in ${JSON.stringify(this.state.actions)}`)
    return run
  }

  /** The station answers an open action: by correlation id for a command, by type for a wait. */
  answer(action: string, now: number, data: unknown = {}, error?: string): EngineOutput {
    const run = this.open(action)
    const typeId = this.state.recipe.Actions.find((a) => a.Name === action)!.TypeId
    const routing = run.correlationId !== undefined ? { correlationId: run.correlationId } : { eventType: typeId }
    return this.apply({ type: "event", ...routing, data, ...(error !== undefined ? { error } : {}) }, now)
  }

  activeSteps(): Array<string> {
    return this.state.active.map((a) => a.step)
  }

  all<T extends OutboxEntry["type"]>(type: T) {
    return this.outputs.flatMap((out) => entriesOf(out, type))
  }
}
