import { type SqlClient, SqlError } from "effect/sql"
import { Context, Deferred, Duration, Effect, Exit, Layer, Option, Schedule, Scope } from "effect"
import { describeSqlFailure, isDatabaseUnavailable } from "./DatabaseOutage.js"
import type { EmbeddedPostgresFailed } from "./EmbeddedPostgres.js"
import { LogStorage, logStorageLayer, type LogStorageService } from "./LogStorage.js"
import { makeStorageAvailability, StorageAvailability } from "./StorageAvailability.js"

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

/** `LogStorage` over a service that is there once the database started: until then every call fails as an outage would. */
const whenStarted = (started: Deferred.Deferred<LogStorageService>): LogStorageService => {
  const use = <A>(f: (s: LogStorageService) => Effect.Effect<A, SqlError.SqlError>) =>
    Effect.flatMap(Deferred.poll(started), (ready) => (Option.isSome(ready) ? Effect.flatMap(ready.value, f) : Effect.fail(notStarted)))
  return {
    hasDatabase: true,
    ensureTable: use((s) => s.ensureTable),
    upsert: (rows) => use((s) => s.upsert(rows)),
    readPrefix: (prefix) => use((s) => s.readPrefix(prefix)),
    readKeys: (keys) => use((s) => s.readKeys(keys)),
    execRecordsContaining: (prefix, needle) => use((s) => s.execRecordsContaining(prefix, needle))
  }
}

/** One try: the database and the table in a scope of their own, closed again if the try fails. */
const startOnce = (database: Layer.Layer<SqlClient.SqlClient, StartFailure>, parent: Scope.Scope) =>
  Effect.gen(function* () {
    const own = yield* Scope.fork(parent, "sequential")
    const context = yield* Layer.buildWithScope(logStorageLayer.pipe(Layer.provide(database)), own).pipe(
      Effect.onExit((exit) => (Exit.isFailure(exit) ? Scope.close(own, exit) : Effect.void))
    )
    return Context.get(context, LogStorage)
  })

/**
 * `LogStorage` whose database starts in the background: the layer is there at once (the daemon
 * serves while an embedded PGlite takes its seconds to start, or while a `PG_URL` server is not up
 * yet), `StorageAvailability` says `Starting`, then `Available`, or `Waiting` while a try failed
 * for a reason a database coming up cures (tried again, 200 ms doubling to 5 s). Calls before the
 * start fail as an outage does, so the storage role waits for the database. A refusal (any other
 * SQLSTATE) ends the tries: logged, and `StorageStart.failure` fails with it.
 */
export const backgroundLogStorage = (
  database: Layer.Layer<SqlClient.SqlClient, StartFailure>
): Layer.Layer<LogStorage | StorageAvailability | StorageStart> =>
  Layer.effectContext(
    Effect.gen(function* () {
      const scope = yield* Effect.scope
      const availability = yield* makeStorageAvailability({ _tag: "Starting" })
      const started = yield* Deferred.make<LogStorageService>()
      const refused = yield* Deferred.make<never, StartFailure>()
      const retry = Schedule.min([Schedule.exponential(Duration.millis(200)), Schedule.spaced(Duration.seconds(5))])
      const start = startOnce(database, scope).pipe(
        Effect.tapError((error) => (isTransient(error) ? availability.startFailed(describe(error)) : Effect.void)),
        Effect.retry({ schedule: retry, while: isTransient }),
        Effect.flatMap((service) => Effect.andThen(Deferred.succeed(started, service), availability.available)),
        Effect.catch((error) =>
          Effect.logError("execution log storage: the database refused the start").pipe(
            Effect.annotateLogs({ error: describe(error) }),
            Effect.andThen(Deferred.fail(refused, error))
          )
        )
      )
      yield* Effect.forkIn(start, scope)
      return Context.make(LogStorage, whenStarted(started))
        .pipe(Context.add(StorageAvailability, availability))
        .pipe(Context.add(StorageStart, { failure: Deferred.await(refused) }))
    })
  )
