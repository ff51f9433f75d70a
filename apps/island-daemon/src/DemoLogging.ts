import { Layer, Logger, References } from "effect"

/**
 * The demo's logging: the daemon's warnings and errors in Effect's pretty form on stderr (the
 * progress lines and the summary go to stdout and stay readable); nothing below warning. The
 * pretty logger writes its lines itself (`console.error` with `LogToStderr`) and returns
 * nothing, so no stray `undefined` line follows an entry.
 */
export const demoLogging = Layer.mergeAll(
  Logger.layer([Logger.consolePretty({ colors: false })]),
  Layer.succeed(Logger.LogToStderr, true),
  Layer.succeed(References.MinimumLogLevel, "Warn")
)
