import type { PgClient } from "@effect/sql-pg"
import type { SqlClient, SqlError } from "effect/sql"
import { Config, Context, Effect, Layer, Option, Redacted } from "effect"
import { embeddedPostgres, type EmbeddedPostgresFailed, type EmbeddedPostgresOptions } from "./EmbeddedPostgres.js"

/** Connections to the embedded PGlite: it runs one query at a time, more would only queue. */
const EMBEDDED_CONNECTIONS = 4

/** How the embedded database ended on its own: the reason, and where its data was (`memory://`: gone with it). */
export interface DatabaseEnd {
  readonly reason: string
  readonly dataDir: string
}

/**
 * Beside the client of an embedded database (internal: `backgroundLogStorage` reads it to start
 * the database again): `ended` completes when its thread ends without a stop (an uncaught error,
 * out of memory, an exit). An external PostgreSQL has none: its outages are waited out by the
 * client, and its server is restarted by whoever runs it.
 */
export class DatabaseEnded extends Context.Service<DatabaseEnded, { readonly ended: Effect.Effect<DatabaseEnd> }>()(
  "@microdcs/execution-log/DatabaseEnded"
) {}

/** The database's client: `@effect/sql-pg` (it speaks the wire protocol itself) is loaded when a database is opened, not with this package. */
const pgClient = (config: PgClient.PgPoolConfig): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError.SqlError> =>
  Layer.unwrap(Effect.map(Effect.promise(() => import("@effect/sql-pg")), (sqlPg) => sqlPg.PgClient.layer(config)))

/**
 * The storage role's database: PostgreSQL at `url` through `@effect/sql-pg`, or, with no URL,
 * the embedded PGlite started on a thread of its own for the layer's lifetime (so the quick start
 * needs nothing running; `embedded.dataDir` keeps its data on disk). The same client code runs
 * against both.
 */
export const storageDatabase = (
  url: Redacted.Redacted | string | undefined,
  embedded: EmbeddedPostgresOptions = {}
): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError.SqlError | EmbeddedPostgresFailed> =>
  url !== undefined
    ? pgClient({ url: typeof url === "string" ? Redacted.make(url) : url, applicationName: "microdcs-storage" })
    : Layer.unwrap(
        Effect.gen(function* () {
          const pg = yield* embeddedPostgres(embedded)
          yield* Effect.logInfo("execution log storage: embedded PGlite").pipe(Effect.annotateLogs({ host: pg.host, port: pg.port, dataDir: pg.dataDir }))
          const ended = Effect.map(
            Effect.promise(() => pg.ended),
            (reason): DatabaseEnd => ({ reason, dataDir: pg.dataDir })
          )
          return Layer.merge(
            pgClient({ url: Redacted.make(pg.url), maxConnections: EMBEDDED_CONNECTIONS, applicationName: "microdcs-storage" }),
            Layer.succeed(DatabaseEnded, { ended })
          )
        })
      )

/** `PG_URL` from the environment (redacted), or none: then the embedded default. */
export const pgUrlConfig: Config.Config<Option.Option<Redacted.Redacted>> = Config.option(Config.Redacted("PG_URL"))

/** {@link storageDatabase} with the URL from `PG_URL`. */
export const storageDatabaseFromEnv: Layer.Layer<
  PgClient.PgClient | SqlClient.SqlClient,
  SqlError.SqlError | EmbeddedPostgresFailed | Config.ConfigError
> = Layer.unwrap(Effect.map(pgUrlConfig, (url) => storageDatabase(Option.getOrUndefined(url))))
