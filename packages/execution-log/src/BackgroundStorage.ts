import { type SqlClient, SqlError } from "effect/sql"
import { Cause, Clock, Context, Deferred, Duration, Effect, Exit, Layer, Metric, Option, Ref, Schedule, Scope } from "effect"
import { describeSqlFailure, isDatabaseUnavailable } from "./DatabaseOutage.js"
import { type EmbeddedPostgresFailed, MEMORY_DATA } from "./EmbeddedPostgres.js"
import { LogStorage, logStorageLayer, type LogStorageService } from "./LogStorage.js"
import { makeStorageAvailability, StorageAvailability, type StorageAvailabilityService } from "./StorageAvailability.js"
import { type DatabaseEnd, DatabaseEnded } from "./StorageDatabase.js"

/** What may stop the database from starting. */
export type StartFailure = SqlError.SqlError | EmbeddedPostgresFailed

/**
 * The start of a database run in the background: `failure` completes only if the database
 * refused the start for good (a wrong password, a database that does not exist), so whoever runs
 * it can end with the reason; it never completes otherwise.
 */
export class StorageStart extends Context.Service<
  StorageStart,
  { readonly failure: Effect.Effect<never, StartFailure> }
>()("@microdcs/execution-log/StorageStart") {}

/** A start failure a database coming up cures: no server yet, an outage, an embedded database still held by a stopping process. */
const isTransient = (error: StartFailure): boolean => error._tag === "EmbeddedPostgresFailed" || isDatabaseUnavailable(error)

const describe = (error: StartFailure): string => (error._tag === "SqlError" ? describeSqlFailure(error) : `${error._tag}: ${error.message}`)

const notStartedMessage = "the execution log's database is not started yet"
// A connection failure without a SQLSTATE: an outage, as `isDatabaseUnavailable` reads it.
const notStarted = new SqlError.SqlError({
  reason: new SqlError.ConnectionError({ cause: new Error(notStartedMessage), message: notStartedMessage, operation: "connect" })
})

/**
 * A call cut off by the close of a database that ended (its client interrupts what still waits on
 * it) fails as an outage, so it is tried again on the next one. Only the call's own result is read:
 * an interruption of the caller still stops the caller.
 */
const cutOffAsOutage = <A>(call: Effect.Effect<A, SqlError.SqlError>) =>
  Effect.flatMap(Effect.exit(call), (exit) =>
    Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? Effect.fail(notStarted) : exit
  )

/** `LogStorage` over the service of the database running now: while there is none (starting, restarting) every call fails as an outage would. */
const whenStarted = (current: Ref.Ref<Option.Option<LogStorageService>>): LogStorageService => {
  const use = <A>(f: (s: LogStorageService) => Effect.Effect<A, SqlError.SqlError>) =>
    Effect.flatMap(Ref.get(current), (running) => (Option.isSome(running) ? cutOffAsOutage(f(running.value)) : Effect.fail(notStarted)))
  return {
    hasDatabase: true,
    ensureTable: use((s) => s.ensureTable),
    upsert: (rows) => use((s) => s.upsert(rows)),
    readPrefix: (prefix) => use((s) => s.readPrefix(prefix)),
    readKeys: (keys) => use((s) => s.readKeys(keys)),
    execRecordsContaining: (prefix, needle) => use((s) => s.execRecordsContaining(prefix, needle))
  }
}

/** A started database: its table, the scope it lives in, and its end of its own (never, for an external PostgreSQL). */
interface Running {
  readonly service: LogStorageService
  readonly scope: Scope.Closeable
  readonly ended: Effect.Effect<DatabaseEnd>
}

/** One try: the database and the table in a scope of their own, closed again if the try fails. */
const startOnce = (database: Layer.Layer<SqlClient.SqlClient, StartFailure>, parent: Scope.Scope) =>
  Effect.gen(function* () {
    const own = yield* Scope.fork(parent, "sequential")
    const context = yield* Layer.buildWithScope(logStorageLayer.pipe(Layer.provideMerge(database)), own).pipe(
      Effect.onExit((exit) => (Exit.isFailure(exit) ? Scope.close(own, exit) : Effect.void))
    )
    // The embedded database's `DatabaseEnded` rides beside its client, outside the layer's declared type.
    const ended = Option.match(Context.getOption(context, DatabaseEnded), { onNone: () => Effect.never, onSome: (d) => d.ended })
    return { service: Context.get(context, LogStorage), scope: own, ended } satisfies Running
  })

/** A database that stayed up this long ended for a reason of its own: its restart starts the back-off over. */
const STABLE_MS = 60_000
/** The wait before the `n`th restart in a row: 200 ms doubling to 5 s, so a database that dies at once is not started in a loop. */
const restartDelay = (n: number) => Duration.millis(Math.min(200 * 2 ** (n - 1), 5000))

/** Embedded PostgreSQL restarts: its thread ended without a stop, and the database was started again. */
export const restartsCounter = Metric.counter("microdcs_execution_log_database_restarts_total", {
  description: "Embedded PostgreSQL restarts after its thread ended (an uncaught error, out of memory, an exit)"
})

const logRestart = (end: DatabaseEnd, delay: Duration.Duration, inRow: number) =>
  Effect.logWarning(
    end.dataDir === MEMORY_DATA
      ? "execution log storage: the embedded PostgreSQL ended; starting it again. Its data was in memory (memory://) and is gone: the archive starts empty"
      : "execution log storage: the embedded PostgreSQL ended; starting it again on its directory"
  ).pipe(Effect.annotateLogs({ reason: end.reason, dataDir: end.dataDir, restartInMs: Duration.toMillis(delay), restartsInRow: inRow }))

/**
 * Keeps a database running: started (tried again while the start fails for a reason a database
 * coming up cures), and, when it ends on its own (the embedded PostgreSQL's thread died), reported
 * lost, logged and counted, its scope closed (the directory's lock is free again) and started
 * again after a bounded back-off. Fails only with a refusal of a start.
 */
const keepRunning = (start: Effect.Effect<Running, StartFailure>, current: Ref.Ref<Option.Option<LogStorageService>>, availability: StorageAvailabilityService) =>
  Effect.gen(function* () {
    let inRow = 0
    for (;;) {
      const running = yield* start
      yield* Ref.set(current, Option.some(running.service))
      yield* availability.available
      const upSince = yield* Clock.currentTimeMillis
      const end = yield* running.ended
      yield* Ref.set(current, Option.none())
      yield* availability.lost(end.reason)
      inRow = (yield* Clock.currentTimeMillis) - upSince >= STABLE_MS ? 1 : inRow + 1
      yield* Metric.update(restartsCounter, 1)
      yield* logRestart(end, restartDelay(inRow), inRow)
      yield* Scope.close(running.scope, Exit.void)
      yield* Effect.sleep(restartDelay(inRow))
    }
  })

/**
 * `LogStorage` whose database starts in the background: the layer is there at once (the daemon
 * serves while an embedded PGlite takes its seconds to start, or while a `PG_URL` server is not up
 * yet), `StorageAvailability` says `Starting`, then `Available`, or `Waiting` while a try failed
 * for a reason a database coming up cures (tried again, 200 ms doubling to 5 s). Calls before the
 * start fail as an outage does, so the storage role waits for the database. A refusal (any other
 * SQLSTATE) ends the tries: logged, and `StorageStart.failure` fails with it. An embedded database
 * whose thread ends on its own is started again (see `keepRunning`); calls wait for it meanwhile.
 */
export const backgroundLogStorage = (
  database: Layer.Layer<SqlClient.SqlClient, StartFailure>
): Layer.Layer<LogStorage | StorageAvailability | StorageStart> =>
  Layer.effectContext(
    Effect.gen(function* () {
      const scope = yield* Effect.scope
      const availability = yield* makeStorageAvailability({ _tag: "Starting" })
      const current = yield* Ref.make(Option.none<LogStorageService>())
      const refused = yield* Deferred.make<never, StartFailure>()
      const retry = Schedule.min([Schedule.exponential(Duration.millis(200)), Schedule.spaced(Duration.seconds(5))])
      const start = startOnce(database, scope).pipe(
        Effect.tapError((error) => (isTransient(error) ? availability.startFailed(describe(error)) : Effect.void)),
        Effect.retry({ schedule: retry, while: isTransient })
      )
      const supervised = keepRunning(start, current, availability).pipe(
        Effect.catch((error) =>
          Effect.logError("execution log storage: the database refused the start").pipe(
            Effect.annotateLogs({ error: describe(error) }),
            Effect.andThen(Deferred.fail(refused, error))
          )
        )
      )
      yield* Effect.forkIn(supervised, scope)
      return Context.make(LogStorage, whenStarted(current))
        .pipe(Context.add(StorageAvailability, availability))
        .pipe(Context.add(StorageStart, { failure: Deferred.await(refused) }))
    })
  )
