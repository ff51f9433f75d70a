import { Effect } from "effect"
import { CorruptEntry, JournalConfigInvalid, JournalNotFound, JournalUnreadable } from "@microdcs/journal"
import { Missing, ProblemsFound, UsageError } from "../ExitCode.js"

type JournalOwn = JournalNotFound | JournalConfigInvalid | CorruptEntry | JournalUnreadable

/**
 * The journal's own errors as the CLI's exit codes: not found 3, a refused configuration 2, a
 * corrupt entry or a stored configuration that does not read back 1 (a problem to fix, with why).
 */
export const journalExit = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, JournalOwn> | Missing | UsageError | ProblemsFound, R> =>
  Effect.mapError(self, (e) => {
    if (e instanceof JournalNotFound) return new Missing({ message: e.message })
    if (e instanceof JournalConfigInvalid) return new UsageError({ message: e.message })
    if (e instanceof CorruptEntry) return new ProblemsFound({ message: `corrupt journal entry ${e.id} in ${e.key}: ${e.message}` })
    if (e instanceof JournalUnreadable) return new ProblemsFound({ message: e.message })
    return e as Exclude<E, JournalOwn>
  })
