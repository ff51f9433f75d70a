import { parentPort, workerData } from "node:worker_threads"
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"

/**
 * The embedded PostgreSQL's own thread (a `worker_threads` worker started by
 * `startEmbeddedPostgres`): PGlite (PostgreSQL compiled to WebAssembly) with its socket server.
 * Compiling the WebAssembly, creating or opening the data directory and every query run here, so
 * the process's main thread, which serves MQTT, HTTP and the other roles, never waits for them.
 * Messages: it posts `listening` (with the port) or `failed`; on `stop` it closes the server and
 * the database and posts `stopped`. `crash-for-test` (the test hook `crashEmbeddedPostgresForTest`)
 * ends the thread as a fault would: an uncaught error, or `process.exit` in the thread.
 */

/** What `startEmbeddedPostgres` hands the worker. */
export interface WorkerSettings {
  readonly host: string
  readonly port: number
  /** A directory, or `memory://`. */
  readonly dataDir: string
  readonly maxConnections: number
}

/** What the thread is told: stop, or (tests only) die as a fault would. */
export type ToWorker = { readonly type: "stop" } | { readonly type: "crash-for-test"; readonly how: "uncaught-error" | "exit" }

export type WorkerMessage =
  | { readonly type: "listening"; readonly port: number }
  | { readonly type: "failed"; readonly message: string }
  | { readonly type: "stopped" }

/**
 * PostgreSQL's buffer pool (128 MB by default) fills as the archive grows, and the process's
 * memory with it. The archive is written far more than it is read (a tree that retention removed
 * from Valkey): a small pool keeps the daemon's memory flat.
 */
const SHARED_BUFFERS = "16MB"

const port = parentPort!
const post = (message: WorkerMessage) => port.postMessage(message)

const serve = async ({ host, port: wanted, dataDir, maxConnections }: WorkerSettings) => {
  const db = await PGlite.create(dataDir, { postgresqlconf: [`shared_buffers = ${SHARED_BUFFERS}`] })
  const server = new PGLiteSocketServer({ db, host, port: wanted, maxConnections })
  try {
    await server.start()
  } catch (error) {
    await db.close().catch(() => undefined)
    throw error
  }
  return { db, server }
}

/** The test hook's fault: thrown outside any handler (the thread's `error`, then its exit), or an exit of the thread. */
const crash = (how: "uncaught-error" | "exit") =>
  void setImmediate(() => {
    if (how === "exit") process.exit(3)
    throw new Error("the embedded PostgreSQL crashed on purpose (crashEmbeddedPostgresForTest)")
  })

serve(workerData as WorkerSettings).then(
  ({ db, server }) => {
    port.on("message", (message: ToWorker) => {
      if (message.type === "crash-for-test") return crash(message.how)
      void (async () => {
        await server.stop().catch(() => undefined)
        await db.close().catch(() => undefined)
        post({ type: "stopped" })
      })()
    })
    post({ type: "listening", port: Number(server.getServerConn().split(":").pop()) })
  },
  (error: unknown) => post({ type: "failed", message: error instanceof Error ? error.message : String(error) })
)
