import { Layer, Logger, LogLevel } from "effect"

/**
 * The demo's logging: the daemon's warnings and errors in Effect's pretty form on stderr (the
 * progress lines and the summary go to stdout and stay readable); nothing below warning. The
 * pretty logger writes its lines itself and returns nothing: wrapped in `withLeveledConsole` it
 * would also print that nothing, an `undefined` line after every entry.
 */
export const demoLogging = Layer.merge(
  Logger.replace(Logger.defaultLogger, Logger.prettyLogger({ stderr: true, colors: false })),
  Logger.minimumLogLevel(LogLevel.Warning)
)
