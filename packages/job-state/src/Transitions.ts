import { Data, Result } from "effect"
import {
  allJobStates,
  type CompoundState,
  jobState,
  JobStates,
  type JobState,
  normalizedName,
  type SimpleState,
  type StateName
} from "./JobState.js"

/** A source as the table writes it: `Main_*` (any substate of a compound state) or a simple state. */
type From = `${CompoundState}_*` | SimpleState
/** A target: a concrete state, or `*_Sub` = keep the main state, enter substate Sub (Update). */
type To = StateName | `*_${string}`

interface Rule {
  readonly from: ReadonlyArray<From>
  readonly to: To
  /** Fired by the island itself (Run: SFC engine starts; Complete: recipe finished), never by an MES call. */
  readonly internal: boolean
  /** The acceptance checks (scope limit, referenced ids) gate the put; they reject with UNABLE_TO_ACCEPT. */
  readonly acceptance: boolean
}

/**
 * The method/trigger table of the job order state machine, one entry per trigger. It is the only place
 * transitions are defined: `transition`, `allowedTriggers` and the trigger properties all read it.
 */
export const transitionTable = {
  Store: { from: ["InitialState"], to: "NotAllowedToStart_Ready", internal: false, acceptance: true },
  StoreAndStart: { from: ["InitialState"], to: "AllowedToStart_Ready", internal: false, acceptance: true },
  Start: { from: ["NotAllowedToStart_*"], to: "AllowedToStart_Ready", internal: false, acceptance: false },
  RevokeStart: { from: ["AllowedToStart_*"], to: "NotAllowedToStart_Ready", internal: false, acceptance: false },
  Update: { from: ["NotAllowedToStart_*", "AllowedToStart_*"], to: "*_Ready", internal: false, acceptance: true },
  Run: { from: ["AllowedToStart_*"], to: "Running", internal: true, acceptance: false },
  Pause: { from: ["Running"], to: "Interrupted_Suspended", internal: false, acceptance: false },
  Resume: { from: ["Interrupted_*"], to: "Running", internal: false, acceptance: false },
  Stop: { from: ["Running", "Interrupted_*"], to: "Ended_Completed", internal: false, acceptance: false },
  Complete: { from: ["Running"], to: "Ended_Completed", internal: true, acceptance: false },
  Abort: {
    from: ["NotAllowedToStart_*", "AllowedToStart_*", "Running", "Interrupted_*"],
    to: "Aborted",
    internal: false,
    acceptance: false
  },
  Cancel: { from: ["NotAllowedToStart_*", "AllowedToStart_*"], to: "EndState", internal: false, acceptance: false },
  Clear: { from: ["Ended_*", "Aborted"], to: "EndState", internal: false, acceptance: false }
} as const satisfies Record<string, Rule>

type Table = typeof transitionTable

export type Trigger = keyof Table
/** The triggers an MES calls as OPC UA methods (everything but Run and Complete). */
export type Method = { [T in Trigger]: Table[T]["internal"] extends true ? never : T }[Trigger]
export type InternalTrigger = Exclude<Trigger, Method>

/** Every trigger, in table order. */
export const triggers = Object.keys(transitionTable) as ReadonlyArray<Trigger>

const rule = (trigger: Trigger): Rule => transitionTable[trigger]

/** The trigger is not allowed in the state (INVALID_JOB_ORDER_STATUS for a method call). */
export class InvalidTransition extends Data.TaggedError("InvalidTransition")<{
  readonly from: JobState
  readonly trigger: Trigger
}> {
  override get message() {
    return `${this.trigger} is not allowed in state ${normalizedName(this.from)}`
  }
}

const matches = (state: JobState, from: From): boolean =>
  from.endsWith("_*") ? state.main === from.slice(0, -2) : normalizedName(state) === from

const resolve = (state: JobState, to: To): JobState => {
  const target = to.startsWith("*_") ? jobState(state.main, to.slice(2)) : JobStates[to as StateName]
  // Only a mistake in the table above gets here; failing at import makes every test see it.
  if (target === undefined) throw new Error(`transition table: ${to} from ${normalizedName(state)} is no state`)
  return target
}

/** The whole machine, resolved once: state name → trigger → target (14 states × 13 triggers). */
const moves: ReadonlyMap<StateName, ReadonlyMap<Trigger, JobState>> = new Map(
  allJobStates.map((state) => [
    normalizedName(state),
    new Map(
      triggers
        .filter((trigger) => rule(trigger).from.some((from) => matches(state, from)))
        .map((trigger) => [trigger, resolve(state, rule(trigger).to)] as const)
    )
  ])
)

const movesFrom = (state: JobState): ReadonlyMap<Trigger, JobState> => moves.get(normalizedName(state)) ?? new Map()

/** The state `trigger` leads to from `state`, or {@link InvalidTransition} when the table forbids it. */
export const transition = (state: JobState, trigger: Trigger): Result.Result<JobState, InvalidTransition> => {
  const target = movesFrom(state).get(trigger)
  return target ? Result.succeed(target) : Result.fail(new InvalidTransition({ from: state, trigger }))
}

/** The triggers allowed in `state`, in table order (none in EndState). */
export const allowedTriggers = (state: JobState): ReadonlyArray<Trigger> => [...movesFrom(state).keys()]

export const isAllowed = (state: JobState, trigger: Trigger): boolean => movesFrom(state).has(trigger)

export const isTrigger = (name: string): name is Trigger => Object.hasOwn(transitionTable, name)

export const isInternal = (trigger: Trigger): trigger is InternalTrigger => rule(trigger).internal

/** Store, StoreAndStart and Update run the acceptance checks before their put. */
export const checksAcceptance = (trigger: Trigger): boolean => rule(trigger).acceptance

/** The trigger creates the job: it enters its scope list and from now on counts toward the limit. */
export const admitsJob = (trigger: Trigger): boolean => rule(trigger).from.includes("InitialState")

/**
 * The trigger retires the job (Cancel, Clear): it leaves its scope list and stops counting toward
 * the limit; its document is kept for the retention period, for queries.
 */
export const retiresJob = (trigger: Trigger): boolean => rule(trigger).to === "EndState"
