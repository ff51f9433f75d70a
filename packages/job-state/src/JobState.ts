import { Data, Result } from "effect"

/**
 * The job-order states of ISA-95 / OPC UA Machinery Jobs. This table is the only
 * place state names and numbers are written down; every type and lookup below derives from it.
 */
const stateTable = {
  InitialState: { number: 0, substates: {} },
  NotAllowedToStart: { number: 1, substates: { Waiting: 1, Ready: 2, Loaded: 3 }, entry: "Ready" },
  AllowedToStart: { number: 2, substates: { Waiting: 1, Ready: 2, Loaded: 3 }, entry: "Ready" },
  Running: { number: 3, substates: {} },
  Interrupted: { number: 4, substates: { Held: 1, Suspended: 2 }, entry: "Suspended" },
  Ended: { number: 5, substates: { Completed: 1, Closed: 2 }, entry: "Completed" },
  Aborted: { number: 6, substates: {} },
  EndState: { number: 7, substates: {} }
} as const

type StateTable = typeof stateTable

export type MainState = keyof StateTable
export type SubStateOf<M extends MainState> = keyof StateTable[M]["substates"] & string
/** Main states that always carry a substate. */
export type CompoundState = { [M in MainState]: [SubStateOf<M>] extends [never] ? never : M }[MainState]
/** Main states that never carry one. */
export type SimpleState = Exclude<MainState, CompoundState>

/** A concrete state: a compound main state always with one of its substates, a simple one without. */
export type JobState = {
  [M in MainState]: M extends CompoundState ? { readonly main: M; readonly sub: SubStateOf<M> } : { readonly main: M }
}[MainState]

/** The normalized name: the state texts joined with `_` (`AllowedToStart_Ready`, `Running`). */
export type StateName = { [M in MainState]: M extends CompoundState ? `${M}_${SubStateOf<M>}` : M }[MainState]

/** One entry of the stored state list (an OPC UA ISA95StateDataType). */
export interface StoredStateEntry {
  readonly StateText: { readonly Text: string; readonly Locale: "en" }
  readonly StateNumber: number
}

/** The state as stored on the job order: the main state, then the substate when it has one. */
export type StoredState = readonly [StoredStateEntry] | readonly [StoredStateEntry, StoredStateEntry]

/** A stored state or state name that is not one of the states above. Data, never thrown. */
export class MalformedJobState extends Data.TaggedError("MalformedJobState")<{
  readonly reason: string
}> {
  override get message() {
    return `malformed job state: ${this.reason}`
  }
}

export const mainStates = Object.keys(stateTable) as ReadonlyArray<MainState>

const substatesOf = (main: MainState): Readonly<Record<string, number>> => stateTable[main].substates

const isMainState = (text: string): text is MainState => Object.hasOwn(stateTable, text)

const isCompound = (main: MainState): main is CompoundState => Object.keys(substatesOf(main)).length > 0

/**
 * One frozen instance per state, so states handed out by this package compare with `===`
 * (use {@link sameState} for states built elsewhere).
 */
const canonical: ReadonlyMap<string, JobState> = new Map(
  mainStates.flatMap((main): ReadonlyArray<readonly [string, JobState]> =>
    isCompound(main)
      ? Object.keys(substatesOf(main)).map((sub) => [`${main}_${sub}`, Object.freeze({ main, sub }) as JobState] as const)
      : [[main, Object.freeze({ main }) as JobState] as const]
  )
)

/** Every state, in table order (14 in all). */
export const allJobStates: ReadonlyArray<JobState> = [...canonical.values()]

/** Every state by its normalized name: `JobStates.AllowedToStart_Ready`, `JobStates.Running`. */
export const JobStates = Object.freeze(Object.fromEntries(canonical)) as Readonly<Record<StateName, JobState>>

export const normalizedName = (state: JobState): StateName =>
  ("sub" in state ? `${state.main}_${state.sub}` : state.main) as StateName

export const sameState = (a: JobState, b: JobState): boolean => normalizedName(a) === normalizedName(b)

/** Entering a main state enters its entry substate (Ready, Suspended, Completed). */
export const entryState = (main: MainState): JobState => {
  const entry = (stateTable[main] as { readonly entry?: string }).entry
  return canonical.get(entry === undefined ? main : `${main}_${entry}`)!
}

/** The state named `main` + `sub`, or undefined when that pair is not a state. */
export const jobState = (main: MainState, sub?: string): JobState | undefined =>
  canonical.get(sub === undefined ? main : `${main}_${sub}`)

export const fromNormalizedName = (name: string): Result.Result<JobState, MalformedJobState> => {
  const state = canonical.get(name)
  return state ? Result.succeed(state) : Result.fail(new MalformedJobState({ reason: `unknown state name '${name}'` }))
}

const entry = (text: string, number: number): StoredStateEntry => ({
  StateText: { Text: text, Locale: "en" },
  StateNumber: number
})

/** Fresh objects on every call, so a caller may embed the result in a document it mutates. */
export const toStoredState = (state: JobState): StoredState => {
  const main = entry(state.main, stateTable[state.main].number)
  return "sub" in state ? [main, entry(state.sub, substatesOf(state.main)[state.sub]!)] : [main]
}

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** Reads one entry's text and number, or says what is wrong with it. */
const readEntry = (u: unknown, position: string): { text: string; number: number } | MalformedJobState => {
  if (!isRecord(u)) return new MalformedJobState({ reason: `${position} entry is not an object` })
  const { StateText: stateText, StateNumber: number } = u
  if (!isRecord(stateText)) return new MalformedJobState({ reason: `${position} entry has no StateText object` })
  if (typeof stateText.Text !== "string") return new MalformedJobState({ reason: `${position} StateText.Text is not a string` })
  // The island writes every state itself, always in English; another locale means foreign or damaged data.
  if (stateText.Locale !== "en") return new MalformedJobState({ reason: `${position} StateText.Locale is not 'en'` })
  if (typeof number !== "number" || !Number.isInteger(number)) {
    return new MalformedJobState({ reason: `${position} StateNumber is not an integer` })
  }
  return { text: stateText.Text, number }
}

/**
 * Parses a stored state list. Total: any input that is not exactly what {@link toStoredState}
 * writes (text and number must agree, a compound state must carry its substate) is a
 * {@link MalformedJobState}; it never falls back to a guess, because a wrong state would let a
 * method through that the real state forbids.
 */
export const fromStoredState = (input: unknown): Result.Result<JobState, MalformedJobState> => {
  if (!Array.isArray(input)) return Result.fail(new MalformedJobState({ reason: "state is not a list" }))
  if (input.length < 1 || input.length > 2) {
    return Result.fail(new MalformedJobState({ reason: `state list has ${input.length} entries, expected 1 or 2` }))
  }
  const main = readEntry(input[0], "main state")
  if (main instanceof MalformedJobState) return Result.fail(main)
  if (!isMainState(main.text)) return Result.fail(new MalformedJobState({ reason: `unknown main state '${main.text}'` }))
  if (stateTable[main.text].number !== main.number) {
    return Result.fail(new MalformedJobState({ reason: `${main.text} has number ${main.number}, expected ${stateTable[main.text].number}` }))
  }
  if (!isCompound(main.text)) {
    return input.length === 1
      ? Result.succeed(canonical.get(main.text)!)
      : Result.fail(new MalformedJobState({ reason: `${main.text} has no substates` }))
  }
  if (input.length === 1) return Result.fail(new MalformedJobState({ reason: `${main.text} needs a substate` }))
  const sub = readEntry(input[1], "substate")
  if (sub instanceof MalformedJobState) return Result.fail(sub)
  const substates = substatesOf(main.text)
  if (!Object.hasOwn(substates, sub.text)) {
    return Result.fail(new MalformedJobState({ reason: `'${sub.text}' is not a substate of ${main.text}` }))
  }
  if (substates[sub.text] !== sub.number) {
    return Result.fail(
      new MalformedJobState({ reason: `${main.text}_${sub.text} has number ${sub.number}, expected ${substates[sub.text]}` })
    )
  }
  return Result.succeed(canonical.get(`${main.text}_${sub.text}`)!)
}

/** No trigger leaves EndState: the job is retired and only kept for queries until its retention ends. */
export const isTerminal = (state: JobState): boolean => state.main === "EndState"

/** Execution is over (Ended_* or Aborted): a job response may be published, only Clear remains. */
export const isFinished = (state: JobState): boolean => state.main === "Ended" || state.main === "Aborted"

/**
 * The job is in its scope list and counts toward the acceptance limit: from Store/StoreAndStart
 * until Clear/Cancel (InitialState means the job does not exist yet).
 */
export const countsTowardLimit = (state: JobState): boolean => state.main !== "InitialState" && state.main !== "EndState"
