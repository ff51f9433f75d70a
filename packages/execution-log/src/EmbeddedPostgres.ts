import { createRequire } from "node:module"
import { pathToFileURL } from "node:url"
import { Worker } from "node:worker_threads"
import { Data, Effect } from "effect"
import { lockDataDir } from "./DataDirLock.js"
import type { ToWorker, WorkerMessage, WorkerSettings } from "./EmbeddedPostgresWorker.js"

/** A PostgreSQL served by PGlite on a thread of its own, over the wire protocol on a loopback port. */
export interface EmbeddedPostgres {
  readonly host: string
  readonly port: number
  /** `postgres://postgres@127.0.0.1:{port}/postgres`: what `PG_URL` would hold for a real server. */
  readonly url: string
  /** Where the data lives: a directory, or `memory://`. */
  readonly dataDir: string
  /** Stops listening, closes the database and ends its thread (the data is gone unless it is in a directory). */
  readonly stop: () => Promise<void>
  /**
   * Resolves with the reason when its thread ends without `stop` (an uncaught error, out of
   * memory, an exit): the database is gone then, its directory's lock already released. Never
   * resolves after `stop`.
   */
  readonly ended: Promise<string>
}

export interface EmbeddedPostgresOptions {
  /** A fixed port (to restart where clients expect it); default: one the OS picks. */
  readonly port?: number | undefined
  /** A directory to keep the data in (created when missing, locked while open); default `memory://`: gone at stop. */
  readonly dataDir?: string | undefined
  /** Client connections served at once (PGlite runs one query at a time; the rest queue). Default 16. */
  readonly maxConnections?: number | undefined
}

/** The embedded PostgreSQL did not start (its data directory is in use or not writable, the port is taken, ...). */
export class EmbeddedPostgresFailed extends Data.TaggedError("EmbeddedPostgresFailed")<{ readonly message: string }> {}

/** The data directory of a database kept in memory: gone with the database. */
export const MEMORY_DATA = "memory://"

/**
 * The worker's code: next to this module once built (`.js`); from the sources (`.ts`, under tsx
 * or vitest) it is loaded through tsx's loader, registered in the worker, which inherits none.
 */
const spawnWorker = (settings: WorkerSettings): Worker => {
  if (!import.meta.url.endsWith(".ts")) return new Worker(new URL("./EmbeddedPostgresWorker.js", import.meta.url), { workerData: settings })
  const tsxApi = createRequire(import.meta.url).resolve("tsx/esm/api").replace(/\.cjs$/, ".mjs")
  const source = new URL("./EmbeddedPostgresWorker.ts", import.meta.url).href
  const boot = `import(${JSON.stringify(pathToFileURL(tsxApi).href)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(source)}) })`
  return new Worker(boot, { eval: true, workerData: settings })
}

/** The next message of the worker, or its death. */
const nextMessage = (worker: Worker): Promise<WorkerMessage> =>
  new Promise((resolve, reject) => {
    const onMessage = (message: WorkerMessage) => done(() => resolve(message))
    const onError = (error: Error) => done(() => reject(error))
    const onExit = (code: number) => done(() => reject(new Error(`the embedded PostgreSQL's thread ended (exit code ${code})`)))
    const done = (settle: () => void) => {
      worker.off("message", onMessage).off("error", onError).off("exit", onExit)
      settle()
    }
    worker.on("message", onMessage).on("error", onError).on("exit", onExit)
  })

/** The threads running now: what the test hook crashes. */
const running = new Set<Worker>()

/** Runs `f` once, however often the result is called (a lock released twice would remove the next holder's). */
const once = (f: () => void) => {
  let done = false
  return () => void (done || ((done = true), f()))
}

/** The reason of a thread's end no one asked for: its uncaught error, when there was one, and its exit code. */
const watchEnd = (worker: Worker, stopping: () => boolean, release: () => void): Promise<string> =>
  new Promise((resolve) => {
    let failure = ""
    worker.on("error", (error: Error) => void (failure = `: ${error.message}`))
    worker.once("exit", (code: number) => {
      running.delete(worker)
      release()
      if (!stopping()) resolve(`the embedded PostgreSQL's thread ended (exit code ${code})${failure}`)
    })
  })

/**
 * Starts the embedded default of the storage role: PGlite with `@electric-sql/pglite-socket` in a
 * `worker_threads` worker, so the same `@effect/sql-pg` client code runs against it as against a
 * real server by `PG_URL`, and its start (seconds of WebAssembly compilation and, the first time,
 * creating the database) and its queries never block the caller's event loop. Nothing needs to be
 * installed or running: PGlite is an npm dependency. A `dataDir` is locked while it is open.
 */
export const startEmbeddedPostgres = async (options: EmbeddedPostgresOptions = {}): Promise<EmbeddedPostgres> => {
  const host = "127.0.0.1"
  const dataDir = options.dataDir ?? MEMORY_DATA
  const release = once(dataDir === MEMORY_DATA ? () => undefined : lockDataDir(dataDir))
  const worker = spawnWorker({ host, port: options.port ?? 0, dataDir, maxConnections: options.maxConnections ?? 16 })
  const first = await nextMessage(worker).catch((error: Error) => ({ type: "failed", message: error.message }) as const)
  if (first.type !== "listening") {
    await worker.terminate()
    release()
    throw new Error(first.type === "failed" ? first.message : "the embedded PostgreSQL stopped at once")
  }
  let stopped: Promise<void> | undefined
  const ended = watchEnd(worker, () => stopped !== undefined, release)
  running.add(worker)
  const stop = () =>
    (stopped ??= (async () => {
      if (!running.has(worker)) return // its thread ended already, and released the directory
      const closed = nextMessage(worker).catch(() => undefined)
      worker.postMessage({ type: "stop" } satisfies ToWorker)
      await closed
      await worker.terminate()
      release()
    })())
  return { host, port: first.port, url: `postgres://postgres@${host}:${first.port}/postgres`, dataDir, stop, ended }
}

/**
 * Test hook: makes the thread of every embedded PostgreSQL this process runs die as a fault would
 * (`uncaught-error`: an error thrown outside any handler; `exit`: the thread exits). Returns how
 * many it told. Never called by the package itself.
 */
export const crashEmbeddedPostgresForTest = (how: "uncaught-error" | "exit" = "uncaught-error"): number => {
  for (const worker of running) worker.postMessage({ type: "crash-for-test", how } satisfies ToWorker)
  return running.size
}

/** {@link startEmbeddedPostgres} in a scope: stopped when the scope closes. */
export const embeddedPostgres = (options: EmbeddedPostgresOptions = {}) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: () => startEmbeddedPostgres(options),
      catch: (error) => new EmbeddedPostgresFailed({ message: error instanceof Error ? error.message : String(error) })
    }),
    (pg) => Effect.promise(() => pg.stop())
  )
