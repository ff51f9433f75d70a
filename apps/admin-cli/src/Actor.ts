import { Flag } from "effect/cli"
import { hostname, userInfo } from "node:os"
import { Effect, Option } from "effect"
import { type Origin, originProblems, withFrom } from "@microdcs/job-state"
import { UsageError } from "./ExitCode.js"

/** The operator on this machine: `alice@host` (the OS user name and host name). */
const defaultActor = (): string => {
  let user: string
  try {
    user = userInfo().username
  } catch {
    // A container may run as a uid without a passwd entry.
    user = process.env["USER"] ?? process.env["LOGNAME"] ?? "unknown"
  }
  return `${user}@${hostname()}`
}

/**
 * `--actor NAME`: who does this, recorded as the origin of the write (`cli:NAME`) in the job
 * order's history and the execution log. Default: the OS user name and host, `alice@host`.
 */
export const actorOption = Flag.String("actor").pipe(
  Flag.withDescription("who does this, recorded in the history and the execution log (default: user@host)"),
  Flag.optional
)

/**
 * The operator's origin, `from` this machine's host name (recorded with `--actor` too: who it
 * says it is, and where the command ran); a bad `--actor` is a usage error listing every problem,
 * before anything is written.
 */
export const actorOrigin = (actor: Option.Option<string>): Effect.Effect<Origin, UsageError> => {
  const origin: Origin = withFrom({ kind: "cli", id: Option.getOrElse(actor, defaultActor) }, hostname())
  const problems = originProblems(origin)
  return problems.length === 0 ? Effect.succeed(origin) : Effect.fail(new UsageError({ message: `--actor: ${problems.join("; ")}` }))
}
