/**
 * The island daemon. Reads its configuration from the environment, starts the roles it is
 * asked to run (all by default), serves /healthz, /readyz, /metrics and the JSON API, and shuts
 * down gracefully on SIGTERM or SIGINT: stop taking messages, finish in-flight ones, release
 * leases, close connections, exit 0.
 *
 * Exit codes: 0 after a shutdown by signal, 2 for a bad configuration (the message names the
 * variable) or a server that refused the island (wrong credentials, missing grants, untrusted
 * certificate: retrying cannot help), 1 for anything else.
 */
import { Cause, Effect, Exit, Fiber, Formatter, Layer, Logger, type LogLevel, References } from "effect"
import { type DaemonConfig, daemonConfig, daemonEnvironment, describeConfigError, shutdownDeadlineMs } from "./DaemonConfig.js"

/** `LOG_LEVEL`'s names (any case), the level labels of effect 3: `off` logs nothing. */
const logLevels: Readonly<Record<string, LogLevel.LogLevel>> = {
  all: "All",
  fatal: "Fatal",
  error: "Error",
  warn: "Warn",
  info: "Info",
  debug: "Debug",
  trace: "Trace",
  off: "None"
}

const logLevel = (): LogLevel.LogLevel => logLevels[(process.env["LOG_LEVEL"] ?? "info").toLowerCase()] ?? "Info"

/**
 * One JSON line per entry on stdout, with the fields the daemon has always written:
 * `{message, logLevel, timestamp, cause?, annotations, spans, fiberId}` (effect 4's own JSON logger
 * names the level `level`).
 */
const jsonLogger = Logger.withConsoleLog(
  Logger.map(Logger.formatStructured, (entry) =>
    Formatter.formatJson({
      message: entry.message,
      logLevel: entry.level,
      timestamp: entry.timestamp,
      cause: entry.cause,
      annotations: entry.annotations,
      spans: entry.spans,
      fiberId: entry.fiberId
    })
  )
)

const logging = Layer.merge(Logger.layer([jsonLogger]), Layer.succeed(References.MinimumLogLevel, logLevel()))

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
    // A shutdown past its deadline is ended hard rather than left running.
    setTimeout(() => {
      process.stderr.write(`${JSON.stringify({ level: "ERROR", message: "shutdown did not finish in time", signal })}\n`)
      process.exit(1)
    }, shutdownDeadlineMs(config.shutdownGraceMs)).unref()
    Effect.runFork(Fiber.interrupt(fiber))
  }
  process.on("SIGTERM", () => stop("SIGTERM"))
  process.on("SIGINT", () => stop("SIGINT"))

  fiber.addObserver((exit) => {
    // Interrupted only (a signal): a clean stop. A failure that came with interruptions (a
    // layer that failed while its siblings were being interrupted) is still a failure.
    if (Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause)) process.exit(0)
    const refused = refusalMessage(exit.cause)
    if (refused !== undefined) {
      process.stderr.write(`${refused}\n`)
      process.exit(2)
    }
    process.stderr.write(`${JSON.stringify({ level: "FATAL", message: "island daemon stopped", cause: Cause.pretty(exit.cause) })}\n`)
    process.exit(1)
  })
}

/**
 * The one-line reason for exit code 2 when the island failed for its settings: a server refused
 * it, or a package refused a value the configuration checks let through.
 */
const refusalMessage = (cause: Cause.Cause<unknown>): string | undefined => {
  const failure = Cause.findErrorOption(cause)
  if (failure._tag === "None" || typeof failure.value !== "object" || failure.value === null) return undefined
  const error = failure.value as { _tag?: unknown; message?: unknown; server?: unknown; field?: unknown; part?: unknown }
  if (error._tag === "StartRefused") return `island not started: ${String(error.server)}: ${String(error.message)}`
  if (error._tag === "InvalidInput" || error._tag === "InvalidTopic") {
    return `invalid configuration: ${String(error.field ?? error.part)}: ${String(error.message)}`
  }
  return undefined
}

// The process ends inside the callback (or runs until a signal); nothing is left to handle its promise.
void Effect.runPromiseExit(daemonConfig.parse(daemonEnvironment())).then(async (exit) => {
  if (Exit.isSuccess(exit)) {
    const { mqttNamesProblem } = await import("./MqttNameChecks.js")
    const problem = mqttNamesProblem(exit.value)
    if (problem === undefined) return start(exit.value)
    process.stderr.write(`${describeConfigError(problem)}\n`)
    process.exit(2)
  }
  const failure = Cause.findErrorOption(exit.cause)
  process.stderr.write(`${failure._tag === "Some" ? describeConfigError(failure.value) : Cause.pretty(exit.cause)}\n`)
  process.exit(2)
})
