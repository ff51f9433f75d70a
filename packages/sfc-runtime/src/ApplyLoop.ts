import { type Context, Effect, Exit, Fiber, Metric } from "effect"
import type { StartParams } from "@microdcs/sfc"
import { ApplyInbox, type AppliedEvent, type PendingInput, type StepInput } from "./ApplyInbox.js"
import type { Applied, ExecutionError } from "./ApplyOutcome.js"
import { runTick } from "./ApplyTick.js"
import type { ExecutionDeps } from "./ExecutionStates.js"
import { tickAnswers } from "./TickAnswers.js"

/**
 * Inputs one tick takes at most (one batched read, one batched CAS). A CAS script holds the
 * server for every other client while it runs (about 50 µs a job): 64 jobs keep it near 3 ms,
 * where 256 measured no faster and held it for about 13.
 */
const TICK_INPUTS = 64
/** Ticks under way at once: while one writes, the next gathers what arrived meanwhile. */
const TICKS_IN_FLIGHT = 2
/** Past this many waiting inputs an offer counts as back-pressure (the sources' own bounds hold them). */
const INBOX_CAPACITY = 4096

export const engineInboxFullCounter = Metric.counter("microdcs_engine_inbox_full_total", {
  description: "Engine inputs offered while the engine's inbox was full (its sources are held back by their own bounds)",
  incremental: true
})

/** The loop's state, read and changed from plain code. */
interface LoopState {
  readonly deps: ExecutionDeps
  readonly inbox: ApplyInbox
  readonly context: Context.Context<never>
  /** Every tick fiber until it ends (its sends included): what the loop's stop waits for. */
  readonly ticks: Set<Fiber.Fiber<void>>
  /** Ticks before their write landed: at most {@link TICKS_IN_FLIGHT}. Sends hold no slot. */
  slots: number
  scheduled: boolean
  closed: boolean
}

/** Starts ticks while there is room and work; called (once per turn of the event loop) after an offer and after each tick. */
const pump = (loop: LoopState): void => {
  loop.scheduled = false
  while (!loop.closed && loop.slots < TICKS_IN_FLIGHT && loop.inbox.hasWork()) startTick(loop)
}

const startTick = (loop: LoopState): void => {
  const groups = loop.inbox.take(TICK_INPUTS)
  let holdsSlot = true
  // The slot is free once the tick's write landed; its written jobs too: a send may hand in
  // an input for its own job (a command held on Pause) and must not wait for its own tick.
  const written = (jobIds: Iterable<string>) => {
    loop.inbox.release(jobIds)
    if (holdsSlot) loop.slots -= 1
    holdsSlot = false
    schedule(loop)
  }
  const answers = tickAnswers((items) => loop.inbox.giveBack(items), written)
  loop.slots += 1
  const fiber = Effect.runForkWith(loop.context)(runTick(loop.deps, answers, groups))
  loop.ticks.add(fiber)
  fiber.addObserver(() => {
    loop.ticks.delete(fiber)
    written(groups.keys())
  })
}

// Deferred to the next turn of the event loop: the inputs that arrive together go into one tick.
const schedule = (loop: LoopState): void => {
  if (loop.scheduled || loop.closed) return
  loop.scheduled = true
  setImmediate(() => pump(loop))
}

// An idle loop starts a tick at once (one job alone waits for nothing); a busy one gathers
// what arrives until the next turn of the event loop.
const arrived = (loop: LoopState): void => (loop.slots === 0 && !loop.scheduled ? pump(loop) : schedule(loop))

/** One input as a source hands it over. */
export interface EngineInputOf {
  readonly jobId: string
  readonly input: StepInput
  readonly appliedEvent?: AppliedEvent | undefined
  /** Creates the job's execution instead (create-only); `input` is then unused. */
  readonly create?: StartParams | undefined
}

const enqueue = (loop: LoopState, offered: EngineInputOf, resume: PendingInput["resume"]): PendingInput => {
  const item: PendingInput = {
    jobId: offered.jobId, input: offered.input, appliedEvent: offered.appliedEvent, create: offered.create,
    resume, attempt: 1, fresh: false, cancelled: false, answered: false
  }
  if (!loop.inbox.offer(item)) engineInboxFullCounter.updateUnsafe(1, loop.context)
  return item
}

// A source that stops waiting before a tick took its inputs drops them (a tick under way finishes its own).
const cancelling = (items: ReadonlyArray<PendingInput>) =>
  Effect.sync(() => items.forEach((item) => (item.cancelled = true)))

const offer = (loop: LoopState, offered: EngineInputOf) =>
  Effect.callback<Applied, ExecutionError>((resume) => {
    if (loop.closed) return resume(Exit.interrupt())
    const item = enqueue(loop, offered, resume)
    arrived(loop)
    return cancelling([item])
  })

/** Many inputs in one call (a sweep's due jobs, a batch of a stream): one answer per input, in order. */
const offerAll = (loop: LoopState, inputs: ReadonlyArray<EngineInputOf>) =>
  Effect.callback<ReadonlyArray<Exit.Exit<Applied, ExecutionError>>>((resume) => {
    if (inputs.length === 0) return resume(Effect.succeed([]))
    if (loop.closed) return resume(Effect.succeed(inputs.map(() => Exit.interrupt())))
    const exits: Array<Exit.Exit<Applied, ExecutionError>> = new Array(inputs.length)
    let open = inputs.length
    const items = inputs.map((offered, i) =>
      enqueue(loop, offered, (exit) => {
        exits[i] = exit
        if (--open === 0) resume(Effect.succeed(exits))
      })
    )
    arrived(loop)
    return cancelling(items)
  })

/** At the end of the scope: the ticks under way finish, what still waits is answered as interrupted. */
const close = (loop: LoopState) =>
  Effect.suspend(() => {
    loop.closed = true
    return Effect.forEach([...loop.ticks], Fiber.await, { discard: true })
  }).pipe(Effect.andThen(Effect.sync(() => loop.inbox.drainAll().forEach((item) => item.resume(Exit.interrupt())))))

/**
 * The engine's loop for one process: every source hands its inputs in (`apply`), and ticks
 * take them by job, a job in one tick at a time, at most {@link TICKS_IN_FLIGHT} ticks at once.
 */
export const makeApplyLoop = (deps: ExecutionDeps) =>
  Effect.gen(function* () {
    const loop: LoopState = {
      deps, inbox: new ApplyInbox(INBOX_CAPACITY), context: yield* Effect.context<never>(), ticks: new Set(), slots: 0, scheduled: false, closed: false
    }
    yield* Effect.addFinalizer(() => close(loop))
    return {
      apply: (jobId: string, input: StepInput, appliedEvent?: AppliedEvent) => offer(loop, { jobId, input, appliedEvent }),
      create: (params: StartParams) => offer(loop, { jobId: params.jobId, input: { type: "tick" }, create: params }),
      applyAll: (inputs: ReadonlyArray<EngineInputOf>) => offerAll(loop, inputs),
      /** Inputs waiting for a tick and ticks under way, for the bench and `/metrics`. */
      stats: () => ({ waiting: loop.inbox.size, ticks: loop.ticks.size, writing: loop.slots, inboxFull: loop.inbox.fullCount })
    } as const
  })
