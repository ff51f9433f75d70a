import { Context, Deferred, type Duration, Effect, Exit, Layer } from "effect"
import type { CommandEntry, ExecutionState, JobOrderEntry, JobResponseEntry } from "@microdcs/sfc"
import type { SfcJobOrderRead } from "@microdcs/store"
import { BoundedMap } from "./BoundedMap.js"

/**
 * How a direct send ended: `true` carried out (sent, or held back for a paused job), the outbox
 * entry needs nothing more; `false` not sent, the entry is the way; `"unknown"` still under way
 * when the engine's stop stopped waiting for it: the station may have it, so this process neither
 * sends the entry nor acknowledges it, and the next instance resends it (same correlation id).
 */
export type DirectSendOutcome = boolean | "unknown"

/** Hands a command to the station right after the CAS that emitted it (see {@link DirectSendOutcome}). */
export interface DirectSender {
  /** The work-stream consumer name of this instance: what the entry's `sender` field says. */
  readonly consumer: string
  /** How long the correlation pointers the CAS sets live (`EngineOptions.correlationTtlMs`). */
  readonly correlationTtlMs: number
  /**
   * `jobOrder` is the job order as the CAS read it after the write (`null`: missing), when it
   * did; then the correlation pointer is set too.
   */
  readonly handle: (
    command: CommandEntry,
    state: ExecutionState,
    entryId: string | undefined,
    jobOrder: SfcJobOrderRead | null | undefined
  ) => Effect.Effect<DirectSendOutcome>
  /**
   * Carries out the job order moves and the job response of a write this instance just made
   * (`version`: the version it wrote), in outbox order, in a fiber of its own: never waited for
   * and never failing; what does not land is left to the outbox entry (same operation ids).
   */
  readonly carryOut: (entries: ReadonlyArray<JobOrderEntry | JobResponseEntry>, version: number, scope: string) => void
}

/** How many commands and correlation ids one process remembers. */
const REMEMBERED = 50_000

/** How long a handler waits for a direct send of this process that is under way. */
const IN_FLIGHT_WAIT = "5 seconds"

const keyOf = (command: Pick<CommandEntry, "correlationId" | "attempt">) => `${command.correlationId}|${command.attempt}`

/** What this process remembers of its direct sends; the service's functions read and update it in plain code. */
interface DispatchMemory {
  sender: DirectSender | undefined
  // Per command, the direct sends under way: two writes may emit the same command (a lost CAS
  // recomputed while the won one sends), and only their joint outcome tells a handler enough.
  readonly inFlight: Map<string, Set<Deferred.Deferred<DirectSendOutcome>>>
  readonly handled: BoundedMap<string, true | "unknown">
  readonly jobs: BoundedMap<string, string>
  // Where the outbox entry of each command sent here is, until this process's work poller has
  // acknowledged it: at shutdown those entries are deleted, since a restarted process would not
  // remember having sent them. Seeing an entry is not enough: a batch cut at shutdown is not
  // acknowledged, and its entries stay pending for whoever comes next.
  readonly unseen: BoundedMap<string, { readonly scope: string; readonly entryId: string }>
  // The job order moves and job responses (their operation ids) this process carried out
  // right after its write: their outbox entries then need no handler (which would read the
  // job order or the response to find them done).
  readonly movedHere: BoundedMap<string, true>
}

const install = (memory: DispatchMemory, next: DirectSender) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      memory.sender = next
    }),
    () =>
      Effect.sync(() => {
        if (memory.sender === next) memory.sender = undefined
      })
  )

/**
 * Marks the commands of a write about to be sent directly, before the CAS: the work-stream
 * handler of this process may see their entries before the direct send finished, and then
 * waits for it instead of sending a second time. Plain code: it runs once per write.
 */
const begin = ({ inFlight }: DispatchMemory, commands: ReadonlyArray<CommandEntry>): ReadonlyArray<Deferred.Deferred<DirectSendOutcome>> =>
  commands.map((command) => {
    const done = Deferred.makeUnsafe<DirectSendOutcome>()
    const key = keyOf(command)
    const running = inFlight.get(key) ?? new Set()
    running.add(done)
    inFlight.set(key, running)
    return done
  })

/** Records how the direct send of `command` under `done` (from `begin`) ended; a second call does nothing. */
const settle = (memory: DispatchMemory, command: CommandEntry, done: Deferred.Deferred<DirectSendOutcome>, outcome: DirectSendOutcome): void => {
  const key = keyOf(command)
  const running = memory.inFlight.get(key)
  if (running?.delete(done) && running.size === 0) memory.inFlight.delete(key)
  if (outcome !== false) memory.handled.set(key, outcome)
  Deferred.doneUnsafe(done, Exit.succeed(outcome))
}

/** What this process knows now: carried out (then forgotten), not sent, or unknown (kept). */
const known = ({ handled }: DispatchMemory, key: string): DirectSendOutcome => {
  const outcome = handled.get(key)
  if (outcome === true) handled.delete(key)
  return outcome ?? false
}

/** Whether this process already carried out the command (waits for direct sends under way). */
const handledHere = (memory: DispatchMemory, command: CommandEntry): Effect.Effect<DirectSendOutcome> =>
  Effect.suspend(() => {
    const key = keyOf(command)
    const running = memory.inFlight.get(key)
    if (!running || memory.handled.get(key) !== undefined) return Effect.succeed(known(memory, key))
    // A send that hangs (a station link that never answers) must not hold the handler forever:
    // past the bound the entry is handled as if nothing was sent (a resend is harmless).
    return Effect.forEach([...running], (done) => Deferred.await(done), { concurrency: "unbounded", discard: true }).pipe(
      Effect.timeoutOrElse({ duration: IN_FLIGHT_WAIT, orElse: () => Effect.void }),
      Effect.map(() => known(memory, key))
    )
  })

/** The synchronous check for a batch: `true` (and forgotten) when already carried out here. */
const takeHandled = ({ handled }: DispatchMemory, command: Pick<CommandEntry, "correlationId" | "attempt">): boolean => {
  const key = keyOf(command)
  return handled.get(key) === true && handled.delete(key)
}

/** A send whose outcome was unknown ended after all: what a later delivery of its entry finds. */
const resolveUnknown = ({ handled }: DispatchMemory, command: Pick<CommandEntry, "correlationId" | "attempt">, sent: boolean) => {
  const key = keyOf(command)
  if (handled.get(key) !== "unknown") return
  if (sent) handled.set(key, true)
  else handled.delete(key)
}

/** Waits (at most `bound`) for the direct sends under way now, e.g. before `unseenEntries` at shutdown. */
const awaitUnderway = ({ inFlight }: DispatchMemory, bound: Duration.Input): Effect.Effect<void> =>
  Effect.suspend(() => {
    const running = [...inFlight.values()].flatMap((set) => [...set])
    // Interruptible, so the bound holds in a finalizer too (uninterruptible otherwise).
    return Effect.interruptible(
      Effect.forEach(running, (done) => Deferred.await(done), { concurrency: "unbounded", discard: true }).pipe(
        Effect.timeoutOrElse({ duration: bound, orElse: () => Effect.void })
      )
    )
  })

type CommandKey = Pick<CommandEntry, "correlationId" | "attempt">

/**
 * The direct send of commands (the hot path): the instance that wins a CAS sends its commands
 * itself, at once, and its work-stream handler later skips their outbox entries. The outbox
 * entry stays the recovery path: if the instance dies between the CAS and the send, another
 * instance (or this one, restarted) finds the entry unhandled and sends it, with the same
 * correlation id. A process without the engine role installs no sender; then every command
 * goes through the outbox as before.
 *
 * It also remembers which job each correlation id it sent belongs to, so a reply that comes back
 * to this process finds its job without reading the correlation pointer.
 */
export class CommandDispatch extends Context.Service<CommandDispatch>()("@microdcs/sfc/CommandDispatch", {
  make: Effect.sync(() => {
    const memory: DispatchMemory = {
      sender: undefined,
      inFlight: new Map(),
      handled: new BoundedMap(REMEMBERED),
      jobs: new BoundedMap(REMEMBERED),
      unseen: new BoundedMap(REMEMBERED),
      movedHere: new BoundedMap(REMEMBERED)
    }
    const { jobs, unseen, movedHere } = memory
    return {
      install: (next: DirectSender) => install(memory, next),
      current: (): DirectSender | undefined => memory.sender,
      begin: (commands: ReadonlyArray<CommandEntry>) => begin(memory, commands),
      settle: (command: CommandEntry, done: Deferred.Deferred<DirectSendOutcome>, outcome: DirectSendOutcome) => settle(memory, command, done, outcome),
      handledHere: (command: CommandEntry) => handledHere(memory, command),
      takeHandled: (command: CommandKey) => takeHandled(memory, command),
      resolveUnknown: (command: CommandKey, sent: boolean) => resolveUnknown(memory, command, sent),
      /** Notes where the outbox entry of a command sent here is (see `unseenEntries`). */
      locate: (command: CommandKey, scope: string, entryId: string) => unseen.set(keyOf(command), { scope, entryId }),
      /** The work poller acknowledged the entry of `command`: nothing is left to delete at shutdown. */
      acknowledged: (command: CommandKey) => void unseen.delete(keyOf(command)),
      /** The outbox entries of commands sent here that this process's work poller has not acknowledged. */
      unseenEntries: (): ReadonlyArray<{ readonly scope: string; readonly entryId: string }> => unseen.values(),
      awaitUnderway: (bound: Duration.Input) => awaitUnderway(memory, bound),
      /** This process carried out the entry with operation id `op` (it landed). */
      moved: (op: string) => movedHere.set(op, true),
      /** Whether `op` landed from here (kept for the batch to take). */
      hasMoved: (op: string): boolean => movedHere.get(op) === true,
      /** The synchronous check for a batch: `true` (and forgotten) when `op` landed from here. */
      takeMoved: (op: string): boolean => movedHere.get(op) === true && movedHere.delete(op),
      rememberJob: (correlationId: string, jobId: string) => jobs.set(correlationId, jobId),
      jobOf: (correlationId: string): string | undefined => jobs.get(correlationId)
    } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
