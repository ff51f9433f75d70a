#!/usr/bin/env node
/**
 * The island daemon. Reads its configuration from the environment, starts the roles it is
 * asked to run (all by default), serves /healthz, /readyz, /metrics and the JSON API, and shuts
 * down gracefully on SIGTERM or SIGINT: stop taking messages, finish in-flight ones, release
 * leases, close connections, exit 0.
 */
import { Cause, Effect, Exit, Fiber, Layer, Logger, LogLevel } from "effect"
import { daemonConfig, describeConfigError, isConfigError } from "./DaemonConfig.js"
import { runIsland } from "./Island.js"

const logLevel = (): LogLevel.LogLevel => {
  const wanted = (process.env["LOG_LEVEL"] ?? "info").toLowerCase()
  return LogLevel.allLevels.find((l) => l.label.toLowerCase() === wanted) ?? LogLevel.Info
}

const program = Effect.gen(function* () {
  const config = yield* daemonConfig
  return yield* runIsland(config)
})

const logging = Layer.merge(Logger.json, Logger.minimumLogLevel(logLevel()))

const fiber = Effect.runFork(program.pipe(Effect.scoped, Effect.provide(logging)))

let stopping = false
const stop = (signal: string) => {
  if (stopping) return
  stopping = true
  const graceMs = Number(process.env["SHUTDOWN_GRACE_MS"] ?? 15_000) + 5_000
  // A shutdown that hangs past the grace period is ended hard rather than left running.
  setTimeout(() => {
    process.stderr.write(`${JSON.stringify({ level: "ERROR", message: "shutdown did not finish in time", signal })}\n`)
    process.exit(1)
  }, graceMs).unref()
  Effect.runFork(Fiber.interrupt(fiber))
}
process.on("SIGTERM", () => stop("SIGTERM"))
process.on("SIGINT", () => stop("SIGINT"))

fiber.addObserver((exit) => {
  if (Exit.isSuccess(exit) || Exit.isInterrupted(exit)) process.exit(0)
  const failure = Cause.failureOption(exit.cause)
  if (failure._tag === "Some" && isConfigError(failure.value)) {
    process.stderr.write(`${describeConfigError(failure.value)}\n`)
    process.exit(2)
  }
  process.stderr.write(`${JSON.stringify({ level: "FATAL", message: "island daemon stopped", cause: Cause.pretty(exit.cause) })}\n`)
  process.exit(1)
})
