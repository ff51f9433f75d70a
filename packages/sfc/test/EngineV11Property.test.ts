import { describe, expect, it } from "@effect/vitest"
import { Result } from "effect"
import fc from "fast-check"
import {
  type CounterNeed,
  type CounterValues,
  countersOfCondition,
  type EngineInput,
  type EngineOutput,
  type ExecutionState,
  isTerminalStatus,
  parseCondition,
  type Recipe,
  start,
  step,
  stepTimeThresholds
} from "@microdcs/sfc"
import { type Clock, type Op, op, resolveOp } from "./EngineArbitraries.js"
import { recipeV11 } from "./EngineArbitrariesV11.js"
import { JOB, SCOPE, T0, withCounters } from "./EngineKit.js"

// Recipe schema v1.1.0 under random inputs: generated recipes with waiting transitions (step
// times, counters, step flags, job order fields) and time limits. A recipe that validates never
// leaves a job stuck, and the same inputs always give the same outputs.

type V11Op = Op | { readonly kind: "order"; readonly priority: number; readonly dt: number }
const v11Op: fc.Arbitrary<V11Op> = fc.oneof(
  { weight: 12, arbitrary: op },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("order" as const), priority: fc.integer({ min: 0, max: 3 }), dt: fc.integer({ min: 0, max: 2_000 }) }) }
)
const orderOf = (priority: number) => ({ JobOrderID: JOB, Priority: priority, Description: "not read" })

/** The transitions evaluated when `source` is left: its own (not into its own paths), and those into the paths of selection branches it leads to. */
const exitTexts = (r: Recipe, source: string): ReadonlyArray<string> => {
  const branch = r.Branches?.find((b) => b.Name === source)
  const own = r.Transitions.filter((t) => t.Source === source && !branch?.Branches.some((p) => p[0] === t.Target))
  const into = own.flatMap((t) => {
    const target = r.Branches?.find((b) => b.Name === t.Target && b.Type === "selection")
    return target === undefined ? [] : r.Transitions.filter((p) => p.Source === target.Name && target.Branches.some((path) => path[0] === p.Target))
  })
  return [...own, ...into].map((t) => t.Condition)
}

/**
 * A way forward of a waiting step or branch, precisely: something that can make one of its
 * transitions hold without anyone's intervention. An open action of the step (a station can
 * still answer it), a counter its transitions read (read again on the sweep), a `T` threshold
 * of the step still ahead of its last evaluation, or the step's own MaxDuration (a declared time limit).
 */
const wayForward = (state: ExecutionState, source: string): boolean => {
  const texts = exitTexts(state.recipe, source)
  if (texts.some((text) => countersOfCondition(text).length > 0)) return true
  const active = state.active.find((a) => a.step === source)
  if (active === undefined) return false
  if (active.limitAt !== undefined) return true
  if (state.actions.some((r) => r.step === source && r.visit === active.visit && (r.state === "dispatched" || r.state === "waiting"))) return true
  // Ahead of the step's time when its transitions were last evaluated (the clock may be past it
  // already: the sweep's next tick evaluates them).
  const elapsed = (active.checkedAt ?? 0) - active.enteredAt - (active.heldMs ?? 0)
  const steps = state.recipe.Steps.map((s) => s.Name)
  return texts.some((text) => {
    const parsed = parseCondition(text, { steps })
    return Result.isSuccess(parsed) && stepTimeThresholds(parsed.success).some((t) => t.step === source && t.ms >= elapsed)
  })
}

/** Every running state has somewhere to go; a paused one runs no clock; an ended one holds nothing. */
const checkState = (out: EngineOutput, input: EngineInput | undefined, now: number, seen: Set<string>): void => {
  const { state } = out
  expect(JSON.parse(JSON.stringify(state))).toStrictEqual(state)
  if (isTerminalStatus(state.status)) return void expect([state.active, state.actions, state.branches]).toEqual([[], [], []])
  if (state.status === "paused") {
    expect(out.due).toBeNull()
    expect([state.jobLimitAt, ...state.active.map((a) => a.limitAt)].every((at) => at === undefined)).toBe(true)
    return
  }
  const waitingBranches = state.branches.filter((b) => b.runningPaths.length === 0)
  expect(state.active.length + waitingBranches.length, "a running job with no active step and no waiting branch").toBeGreaterThan(0)
  for (const b of waitingBranches) {
    expect(b.checkedAt, `branch ${b.name} has no running path and does not wait`).toBeDefined()
    expect(wayForward(state, b.name), `branch ${b.name} waits with no way forward`).toBe(true)
    seen.add("waiting branch")
  }
  for (const a of state.active) {
    const working = state.actions.some(
      (r) => r.step === a.step && r.visit === a.visit && r.deadline !== undefined && state.recipe.Actions.find((x) => x.Name === r.action)?.Qualifier === "N"
    )
    if (working) continue
    expect(a.branch, `path step ${a.step} is neither working nor can it wait`).toBeUndefined()
    expect(a.checkedAt, `step ${a.step} is done but neither advanced nor waits`).toBeDefined()
    expect(wayForward(state, a.step), `step ${a.step} waits with no way forward`).toBe(true)
    seen.add("waiting step")
  }
  // A sweep leaves nothing overdue behind: the next due time is ahead (else the sweep would spin).
  if (input?.type === "tick") expect(out.due === null || out.due > now, `due ${out.due} at ${now}`).toBe(true)
}

interface Call {
  readonly state: ExecutionState
  readonly input: EngineInput
  readonly now: number
  readonly counters: ReadonlyArray<CounterValues>
}

interface Run {
  readonly first: EngineOutput
  readonly calls: ReadonlyArray<Call>
  readonly outputs: ReadonlyArray<EngineOutput>
}

/** Counter values for each read, in read order, from a generated cycle. */
const counterReader = (values: ReadonlyArray<number>) => {
  let reads = 0
  return (need: CounterNeed): CounterValues => Object.fromEntries(need.counters.map((c) => [c, values[reads++ % values.length]!]))
}

const runSequence = (r: Recipe, ops: ReadonlyArray<V11Op>, counterCycle: ReadonlyArray<number>, priority: number, seen: Set<string>): Run => {
  const read = counterReader(counterCycle)
  const clock: Clock = { now: T0 }
  const params = { jobId: JOB, scope: SCOPE, workMasterId: "wm-1", recipe: r, maxAttempts: 2, order: orderOf(priority) }
  const first = withCounters((values) => start(params, T0, values), (o) => o.needsCounters, read).result
  checkState(first, undefined, T0, seen)
  const calls: Array<Call> = []
  const outputs: Array<EngineOutput> = []
  let out = first
  for (const o of ops) {
    const before = out.state
    let input: EngineInput
    if (o.kind === "order") {
      clock.now += o.dt
      input = { type: "order", order: orderOf(o.priority) }
    } else input = resolveOp(o, before, out.due, [], clock)
    const counters: Array<CounterValues> = []
    const run = withCounters((values) => step(before, input, clock.now, undefined, values), (x) => x.needsCounters, (need) => {
      const values = read(need)
      counters.push(values)
      return values
    })
    if (input.type === "tick" && before.active.some((a) => a.limitAt !== undefined && a.limitAt <= clock.now)) seen.add("step limit")
    out = run.result
    calls.push({ state: before, input, now: clock.now, counters })
    outputs.push(out)
    checkState(out, input, clock.now, seen)
  }
  return { first, calls, outputs }
}

describe("engine properties, recipe schema v1.1.0", () => {
  it("never leaves a running job without a way forward, and replaying the same inputs gives the same states and outboxes", () => {
    const seen = new Set<string>()
    fc.assert(
      fc.property(
        recipeV11,
        fc.array(v11Op, { maxLength: 40 }),
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 0, max: 3 }),
        (r, ops, counterCycle, priority) => {
          const run = runSequence(r, ops, counterCycle, priority, seen)
          // The same calls again, each state read back from its JSON as the runtime stores it.
          run.calls.forEach((call, i) => {
            const stored = JSON.parse(JSON.stringify(call.state)) as ExecutionState
            const again = step(stored, call.input, call.now, undefined, call.counters)
            expect(again).toStrictEqual(run.outputs[i])
          })
        }
      ),
      { numRuns: 500 }
    )
    // The generators reach the v1.1.0 behaviours, so the invariants were checked on them.
    expect([...seen].sort()).toEqual(["step limit", "waiting branch", "waiting step"])
  })

  it("generates recipes that validate under v1.1.0 only (each names v1.1.0)", () => {
    fc.assert(
      fc.property(recipeV11, (r) => {
        expect(r.SchemaVersion).toBe("1.1.0")
        expect(r.Transitions.every((t) => !t.Condition.includes("$SELF"))).toBe(true)
      }),
      { numRuns: 50 }
    )
  })
})
