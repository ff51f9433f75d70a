import { Deferred, type Duration, Effect, Exit, FiberId } from "effect"
import type { CommandEntry, JobOrderEntry, JobResponseEntry } from "../engine/Outbox.js"
import type { ExecutionState } from "../engine/ExecutionState.js"
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
   * `jobOrderDoc` is the job order as the CAS read it after the write (`null`: missing), when it
   * did; then the correlation pointer is set too.
   */
  readonly handle: (
    command: CommandEntry,
    state: ExecutionState,
    entryId: string | undefined,
    jobOrderDoc: string | null | undefined
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
export class CommandDispatch extends Effect.Service<CommandDispatch>()("@microdcs/sfc/CommandDispatch", {
  sync: () => {
    let sender: DirectSender | undefined
    // Per command, the direct sends under way: two writes may emit the same command (a lost CAS
    // recomputed while the won one sends), and only their joint outcome tells a handler enough.
    const inFlight = new Map<string, Set<Deferred.Deferred<DirectSendOutcome>>>()
    const handled = new BoundedMap<string, true | "unknown">(REMEMBERED)
    const jobs = new BoundedMap<string, string>(REMEMBERED)
    // Where the outbox entry of each command sent here is, until this process's work poller has
    // acknowledged it: at shutdown those entries are deleted, since a restarted process would not
    // remember having sent them. Seeing an entry is not enough: a batch cut at shutdown is not
    // acknowledged, and its entries stay pending for whoever comes next.
    const unseen = new BoundedMap<string, { readonly scope: string; readonly entryId: string }>(REMEMBERED)

    const install = (next: DirectSender) =>
      Effect.acquireRelease(
        Effect.sync(() => {
          sender = next
        }),
        () =>
          Effect.sync(() => {
            if (sender === next) sender = undefined
          })
      )

    /**
     * Marks the commands of a write about to be sent directly, before the CAS: the work-stream
     * handler of this process may see their entries before the direct send finished, and then
     * waits for it instead of sending a second time. Plain code: it runs once per write.
     */
    const begin = (commands: ReadonlyArray<CommandEntry>): ReadonlyArray<Deferred.Deferred<DirectSendOutcome>> =>
      commands.map((command) => {
        const done = Deferred.unsafeMake<DirectSendOutcome>(FiberId.none)
        const key = keyOf(command)
        const running = inFlight.get(key) ?? new Set()
        running.add(done)
        inFlight.set(key, running)
        return done
      })

    /** Records how the direct send of `command` under `done` (from `begin`) ended; a second call does nothing. */
    const settle = (command: CommandEntry, done: Deferred.Deferred<DirectSendOutcome>, outcome: DirectSendOutcome): void => {
      const key = keyOf(command)
      const running = inFlight.get(key)
      if (running?.delete(done) && running.size === 0) inFlight.delete(key)
      if (outcome !== false) handled.set(key, outcome)
      Deferred.unsafeDone(done, Exit.succeed(outcome))
    }

    /** What this process knows now: carried out (then forgotten), not sent, or unknown (kept). */
    const known = (key: string): DirectSendOutcome => {
      const outcome = handled.get(key)
      if (outcome === true) handled.delete(key)
      return outcome ?? false
    }

    /** Whether this process already carried out the command (waits for direct sends under way). */
    const handledHere = (command: CommandEntry): Effect.Effect<DirectSendOutcome> =>
      Effect.suspend(() => {
        const key = keyOf(command)
        const running = inFlight.get(key)
        if (!running || handled.get(key) !== undefined) return Effect.succeed(known(key))
        // A send that hangs (a station link that never answers) must not hold the handler forever:
        // past the bound the entry is handled as if nothing was sent (a resend is harmless).
        return Effect.forEach([...running], (done) => Deferred.await(done), { concurrency: "unbounded", discard: true }).pipe(
          Effect.timeoutTo({ duration: IN_FLIGHT_WAIT, onTimeout: () => undefined, onSuccess: () => undefined }),
          Effect.map(() => known(key))
        )
      })

    /** The synchronous check for a batch: `true` (and forgotten) when already carried out here. */
    const takeHandled = (command: Pick<CommandEntry, "correlationId" | "attempt">): boolean => {
      const key = keyOf(command)
      return handled.get(key) === true && handled.delete(key)
    }

    /** A send whose outcome was unknown ended after all: what a later delivery of its entry finds. */
    const resolveUnknown = (command: Pick<CommandEntry, "correlationId" | "attempt">, sent: boolean) => {
      const key = keyOf(command)
      if (handled.get(key) !== "unknown") return
      if (sent) handled.set(key, true)
      else handled.delete(key)
    }

    /** Notes where the outbox entry of a command sent here is (see `unseenEntries`). */
    const locate = (command: Pick<CommandEntry, "correlationId" | "attempt">, scope: string, entryId: string) =>
      unseen.set(keyOf(command), { scope, entryId })

    /** The work poller acknowledged the entry of `command`: nothing is left to delete at shutdown. */
    const acknowledged = (command: Pick<CommandEntry, "correlationId" | "attempt">) => void unseen.delete(keyOf(command))

    /** The outbox entries of commands sent here that this process's work poller has not acknowledged. */
    const unseenEntries = (): ReadonlyArray<{ readonly scope: string; readonly entryId: string }> => unseen.values()

    /** Waits (at most `bound`) for the direct sends under way now, e.g. before `unseenEntries` at shutdown. */
    const awaitUnderway = (bound: Duration.DurationInput): Effect.Effect<void> =>
      Effect.suspend(() => {
        const running = [...inFlight.values()].flatMap((set) => [...set])
        // Interruptible, so the bound holds in a finalizer too (uninterruptible otherwise).
        return Effect.interruptible(
          Effect.forEach(running, (done) => Deferred.await(done), { concurrency: "unbounded", discard: true }).pipe(
            Effect.timeoutTo({ duration: bound, onTimeout: () => undefined, onSuccess: () => undefined })
          )
        )
      })

    // The job order moves and job responses (their operation ids) this process carried out
    // right after its write: their outbox entries then need no handler (which would read the
    // job order or the response to find them done).
    const movedHere = new BoundedMap<string, true>(REMEMBERED)
    /** This process carried out the entry with operation id `op` (it landed). */
    const moved = (op: string) => movedHere.set(op, true)
    /** Whether `op` landed from here (kept for the batch to take). */
    const hasMoved = (op: string): boolean => movedHere.get(op) === true
    /** The synchronous check for a batch: `true` (and forgotten) when `op` landed from here. */
    const takeMoved = (op: string): boolean => movedHere.get(op) === true && movedHere.delete(op)

    const rememberJob = (correlationId: string, jobId: string) => jobs.set(correlationId, jobId)
    const jobOf = (correlationId: string): string | undefined => jobs.get(correlationId)

    return {
      install,
      current: (): DirectSender | undefined => sender,
      begin,
      settle,
      handledHere,
      takeHandled,
      resolveUnknown,
      locate,
      acknowledged,
      unseenEntries,
      awaitUnderway,
      moved,
      hasMoved,
      takeMoved,
      rememberJob,
      jobOf
    } as const
  }
}) {}
