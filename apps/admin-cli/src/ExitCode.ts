import { Data } from "effect"

/**
 * Exit codes a script can trust: each one means one thing, whatever the command.
 * 6 and 70 go beyond the contract's five because a conflict on a write and a bug in the tool
 * must not look like "problems found" or "not found".
 */
export const ExitCode = {
  ok: 0,
  /** A check found problems (index check, recipe validation, a rebuild that left some unrepaired). */
  problems: 1,
  /** Bad flags, arguments, environment variables or input values. */
  usage: 2,
  /** The id, key or file named on the command line does not exist. */
  notFound: 3,
  /** The island's Valkey could not be reached, or did not answer. */
  unavailable: 4,
  /** A destructive command without confirmation (no `--yes` in a non-interactive session, or declined). */
  refused: 5,
  /** The store refused the write (version conflict, a corrupted key of another type, a lease held elsewhere). */
  conflict: 6,
  /** A defect: a bug in this tool or in the store (EX_SOFTWARE). */
  internal: 70
} as const

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode]

/** A check found problems; the command already printed them. */
export class ProblemsFound extends Data.TaggedError("ProblemsFound")<{ readonly message: string }> {}

/** A destructive command was not confirmed; nothing was changed. */
export class Refused extends Data.TaggedError("Refused")<{ readonly message: string }> {}

/** Input that the option parser could not judge alone (an unknown state name, a file that is not JSON). */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}

/** Something the operator named does not exist (a dedupe entry, a lease). */
export class Missing extends Data.TaggedError("Missing")<{ readonly message: string }> {}

/** What the command was about to change moved under it (a lease changed holder); nothing was changed. */
export class Conflict extends Data.TaggedError("Conflict")<{ readonly message: string }> {}

/** The exit code of a failure of the error channel, by its tag; unknown tags are bugs. */
export const exitCodeOf = (tag: string): ExitCode => {
  switch (tag) {
    case "ProblemsFound":
      return ExitCode.problems
    case "UsageError":
    case "InvalidInput":
    case "ConfigError":
    case "ValidationError":
      return ExitCode.usage
    case "NotFound":
    case "Missing":
      return ExitCode.notFound
    case "StoreUnavailable":
    case "StorageUnavailable":
    case "UnknownOutcome":
      return ExitCode.unavailable
    case "Refused":
    case "QuitError":
      return ExitCode.refused
    case "Conflict":
    case "VersionConflict":
    case "ScopeConflict":
    case "StateMoved":
    case "WrongType":
    case "LimitReached":
    case "Busy":
    case "LeaseLost":
    case "DuplicateEvent":
      return ExitCode.conflict
    default:
      return ExitCode.internal
  }
}
