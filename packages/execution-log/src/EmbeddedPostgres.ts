import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { Effect } from "effect"

/** A PostgreSQL served in this process by PGlite over the wire protocol, on a loopback port. */
export interface EmbeddedPostgres {
  readonly host: string
  readonly port: number
  /** `postgres://postgres@127.0.0.1:{port}/postgres`: what `PG_URL` would hold for a real server. */
  readonly url: string
  /** Stops listening and closes the database (its data is gone unless `dataDir` was given). */
  readonly stop: () => Promise<void>
}

export interface EmbeddedPostgresOptions {
  /** A fixed port (to restart where clients expect it); default: one the OS picks. */
  readonly port?: number | undefined
  /** A directory to keep the data in; default: in memory. */
  readonly dataDir?: string | undefined
  /** Client connections served at once (PGlite runs one query at a time; the rest queue). Default 16. */
  readonly maxConnections?: number | undefined
}

/**
 * Starts the embedded default of the storage role (execution-log.md §2): PGlite with
 * `@electric-sql/pglite-socket`, so the same `@effect/sql-pg` client code runs against it as
 * against a real server by `PG_URL`. Nothing needs to be installed or running: PGlite is
 * PostgreSQL compiled to WebAssembly, an npm dependency.
 */
export const startEmbeddedPostgres = async (options: EmbeddedPostgresOptions = {}): Promise<EmbeddedPostgres> => {
  const db = await PGlite.create(options.dataDir ?? "memory://")
  const host = "127.0.0.1"
  const server = new PGLiteSocketServer({ db, host, port: options.port ?? 0, maxConnections: options.maxConnections ?? 16 })
  try {
    await server.start()
  } catch (error) {
    await db.close()
    throw error
  }
  const port = Number(server.getServerConn().split(":").pop())
  let stopped: Promise<void> | undefined
  const stop = () =>
    (stopped ??= (async () => {
      await server.stop().catch(() => undefined)
      await db.close().catch(() => undefined)
    })())
  return { host, port, url: `postgres://postgres@${host}:${port}/postgres`, stop }
}

/** {@link startEmbeddedPostgres} in a scope: stopped when the scope closes. */
export const embeddedPostgres = (options: EmbeddedPostgresOptions = {}) =>
  Effect.acquireRelease(
    Effect.promise(() => startEmbeddedPostgres(options)),
    (pg) => Effect.promise(() => pg.stop())
  )
