#!/usr/bin/env node
/**
 * The island daemon. Reads its configuration from the environment, starts the roles it is
 * asked to run (all by default), serves /healthz, /readyz, /metrics and the JSON API, and shuts
 * down gracefully on SIGTERM or SIGINT: stop taking messages, finish in-flight ones, release
 * leases, close connections, exit 0.
 *
 * Exit codes: 0 after a shutdown by signal, 2 for a bad configuration (the message names the
 * variable), 1 for anything else.
 */
import { Cause, Effect, Exit, Fiber, Layer, Logger, LogLevel } from "effect"
import { type DaemonConfig, daemonConfig, describeConfigError } from "./DaemonConfig.js"

const logLevel = (): LogLevel.LogLevel => {
  const wanted = (process.env["LOG_LEVEL"] ?? "info").toLowerCase()
  return LogLevel.allLevels.find((l) => l.label.toLowerCase() === wanted) ?? LogLevel.Info
}

const logging = Layer.merge(Logger.json, Logger.minimumLogLevel(logLevel()))

/** Exits on the first signal; the island is started only with a valid configuration. */
const run = (config: DaemonConfig) =>
  Effect.gen(function* () {
    // Loaded only now: the island's module graph takes seconds to load, and a bad configuration
    // must be reported at once.
    const { runIsland } = yield* Effect.promise(() => import("./Island.js"))
    return yield* runIsland(config)
  })

const start = (config: DaemonConfig) => {
  const fiber = Effect.runFork(run(config).pipe(Effect.scoped, Effect.provide(logging)))

  let stopping = false
  const stop = (signal: string) => {
    if (stopping) return
    stopping = true
    // The engine's pollers and then its station ingress drain one after the other, each within
    // the grace, and closing the connections takes a little more: a shutdown past that is ended
    // hard rather than left running.
    setTimeout(() => {
      process.stderr.write(`${JSON.stringify({ level: "ERROR", message: "shutdown did not finish in time", signal })}\n`)
      process.exit(1)
    }, 2 * config.shutdownGraceMs + 5_000).unref()
    Effect.runFork(Fiber.interrupt(fiber))
  }
  process.on("SIGTERM", () => stop("SIGTERM"))
  process.on("SIGINT", () => stop("SIGINT"))

  fiber.addObserver((exit) => {
    // Interrupted only (a signal): a clean stop. A failure that came with interruptions (a
    // layer that failed while its siblings were being interrupted) is still a failure.
    if (Exit.isSuccess(exit) || Cause.isInterruptedOnly(exit.cause)) process.exit(0)
    process.stderr.write(`${JSON.stringify({ level: "FATAL", message: "island daemon stopped", cause: Cause.pretty(exit.cause) })}\n`)
    process.exit(1)
  })
}

Effect.runPromiseExit(daemonConfig).then((exit) => {
  if (Exit.isSuccess(exit)) return start(exit.value)
  const failure = Cause.failureOption(exit.cause)
  process.stderr.write(`${failure._tag === "Some" ? describeConfigError(failure.value) : Cause.pretty(exit.cause)}\n`)
  process.exit(2)
})
