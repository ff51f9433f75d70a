import type { SqlError } from "effect/sql"
import { Duration, Effect, Option, Predicate, Schedule } from "effect"
import { StorageAvailability } from "./StorageAvailability.js"

/**
 * SQLSTATE classes of a server that cannot serve right now rather than of a statement it
 * refuses: connection exception (08), insufficient resources (53, e.g. too many connections or a
 * full disk), operator intervention (57: shutting down, starting up, cancelled) and system error (58).
 */
const OUTAGE_CLASSES = ["08", "53", "57", "58"]

const SQLSTATE = /^[0-9A-Z]{5}$/

/**
 * A field of the driver's error under the `SqlError` (its reason's `cause`): the server's error
 * fields (`code` is the SQLSTATE, `message` its text), or the socket's error (`code` such as
 * `ECONNREFUSED`).
 */
const driverField = (error: SqlError.SqlError, field: "code" | "message"): unknown => {
  const cause = error.reason.cause
  return Predicate.hasProperty(cause, field) ? cause[field] : undefined
}

/**
 * Whether a failure means the database is not there (down, restarting, unreachable, not started
 * yet) rather than that it refused the statement. A failure without a SQLSTATE never got an
 * answer from a server: connection refused or reset, a timeout, a database still starting. A
 * SQLSTATE of another class is the server's answer to the request itself (an undefined table, a
 * value it cannot store): trying again at once would get the same answer.
 */
export const isDatabaseUnavailable = (error: SqlError.SqlError): boolean => {
  const code = driverField(error, "code")
  return typeof code === "string" && SQLSTATE.test(code) ? OUTAGE_CLASSES.some((c) => code.startsWith(c)) : true
}

/** The first line of a failure, with the code that says what kind it is. */
export const describeSqlFailure = (error: SqlError.SqlError): string => {
  const message = driverField(error, "message")
  const detail = typeof message === "string" && message !== "" ? `: ${message}` : ""
  const sqlState = driverField(error, "code")
  const code = sqlState === undefined ? "" : ` (${String(sqlState)})`
  return `${error.message}${detail}${code}`.split("\n")[0]!.slice(0, 300)
}

/** The bounded back-off between tries while the database is away. */
export interface OutageBackoff {
  /** The first wait; it doubles up to `maxMs`. Default 100. */
  readonly initialMs?: number | undefined
  /** The longest wait between tries. Default 2000. */
  readonly maxMs?: number | undefined
}

/**
 * Runs `effect` until it gets past the database: while it fails because the database is
 * unavailable ({@link isDatabaseUnavailable}) it is tried again after a bounded back-off, for as
 * long as the outage lasts, and the outage is reported to `StorageAvailability` (when there is
 * one). Any other failure comes out as it is, at once.
 */
export const waitOutOutage = <A, R>(
  effect: Effect.Effect<A, SqlError.SqlError, R>,
  backoff: OutageBackoff = {}
): Effect.Effect<A, SqlError.SqlError, R> =>
  Effect.flatMap(Effect.serviceOption(StorageAvailability), (availability) => {
    const report = <X>(f: (a: StorageAvailability["Service"]) => Effect.Effect<X>) => Option.match(availability, { onNone: () => Effect.void, onSome: f })
    const schedule = Schedule.min([
      Schedule.exponential(Duration.millis(backoff.initialMs ?? 100)),
      Schedule.spaced(Duration.millis(backoff.maxMs ?? 2000))
    ])
    return effect.pipe(
      Effect.tapError((error) => (isDatabaseUnavailable(error) ? report((a) => a.waiting(describeSqlFailure(error))) : Effect.void)),
      Effect.retry({ schedule, while: isDatabaseUnavailable }),
      Effect.tap(() => report((a) => a.available))
    )
  })
