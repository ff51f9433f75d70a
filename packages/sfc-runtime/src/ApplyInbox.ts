import type { Exit } from "effect"
import type { EngineInput, ExecutionState, StartParams } from "@microdcs/sfc"
import type { Applied, ExecutionError } from "./ApplyOutcome.js"

/** An input as its source hands it over: a value, or one computed from the state it applies to. */
export type StepInput = EngineInput | ((state: ExecutionState) => EngineInput)

/** An event recorded in the same write as the input, so a redelivered event is a no-op. */
export interface AppliedEvent {
  readonly source: string
  readonly id: string
}

/** One input waiting for (or in) a tick, with the plain callback its source waits on. */
export interface PendingInput {
  readonly jobId: string
  readonly input: StepInput
  readonly appliedEvent: AppliedEvent | undefined
  /** Set on the input that creates the job's execution (create-only); then `input` is unused. */
  readonly create?: StartParams | undefined
  readonly resume: (outcome: Exit.Exit<Applied, ExecutionError>) => void
  /** How many ticks tried it; a job that keeps moving under it fails with `StateMoved`. */
  attempt: number
  /** The next tick reads the job's state instead of trusting the cache (after a conflict). */
  fresh: boolean
  /** Its source stopped waiting before a tick took it: it is dropped, never applied. */
  cancelled: boolean
  /** Answered (its source resumed): never taken or answered again. */
  answered: boolean
}

/**
 * The inputs of one process, in arrival order. A tick takes the inputs of jobs no tick holds,
 * all of a job's taken inputs in order; an input a tick gives back goes to the front, so a job's
 * inputs never overtake each other. A create is alone in its tick: what comes after it applies
 * to the state it writes. An event is in a job's tick once: a redelivery that arrived beside it
 * waits for the next tick.
 */
export class ApplyInbox {
  private items: Array<PendingInput> = []
  /** Jobs some tick holds: their inputs wait for the next tick. */
  readonly busy = new Set<string>()
  /** Offers that found the inbox at or over capacity (the sources' own bounds hold them back). */
  fullCount = 0

  constructor(private readonly capacity: number) {}

  get size(): number {
    return this.items.length
  }

  /** Adds one input; `false` when the inbox was already full (the input is still kept). */
  offer(item: PendingInput): boolean {
    this.items.push(item)
    if (this.items.length <= this.capacity) return true
    this.fullCount += 1
    return false
  }

  /** Gives a tick's inputs back, ahead of everything that arrived since. */
  giveBack(items: ReadonlyArray<PendingInput>): void {
    if (items.length > 0) this.items = [...items, ...this.items]
  }

  /** Whether some input could be taken now. */
  hasWork(): boolean {
    return this.items.some((item) => !item.cancelled && !item.answered && !this.busy.has(item.jobId))
  }

  /** Takes up to `limit` inputs, grouped by job; the jobs taken are busy until `release`. */
  take(limit: number): Map<string, Array<PendingInput>> {
    const taken = new Map<string, Array<PendingInput>>()
    const kept: Array<PendingInput> = []
    // A job with an input kept back keeps its later ones too (order within a job).
    const heldBack = new Set<string>()
    const events = new Set<string>()
    let count = 0
    for (const item of this.items) {
      if (item.cancelled || item.answered) continue
      const startsAnother = item.create !== undefined && taken.has(item.jobId)
      // The same event twice in one write would apply twice: the second waits for the next
      // tick, where the first's record makes it a duplicate.
      const eventKey = item.appliedEvent === undefined ? undefined : `${item.jobId}\u0000${item.appliedEvent.source}\u0000${item.appliedEvent.id}`
      const repeats = eventKey !== undefined && events.has(eventKey)
      if (count >= limit || startsAnother || repeats || this.busy.has(item.jobId) || heldBack.has(item.jobId)) {
        kept.push(item)
        heldBack.add(item.jobId)
        continue
      }
      const group = taken.get(item.jobId)
      if (group) group.push(item)
      else taken.set(item.jobId, [item])
      if (item.create !== undefined) heldBack.add(item.jobId)
      if (eventKey !== undefined) events.add(eventKey)
      count += 1
    }
    this.items = kept
    for (const jobId of taken.keys()) this.busy.add(jobId)
    return taken
  }

  release(jobIds: Iterable<string>): void {
    for (const jobId of jobIds) this.busy.delete(jobId)
  }

  /** Empties the inbox (the loop stopped): the caller answers what it returns. */
  drainAll(): ReadonlyArray<PendingInput> {
    const all = this.items.filter((item) => !item.cancelled && !item.answered)
    this.items = []
    return all
  }
}
