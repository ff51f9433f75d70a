import { Console } from "effect"

/**
 * Colour only for a person at a terminal: not when the output is piped or redirected, not with
 * `NO_COLOR` set to anything but the empty string (no-color.org), not on a dumb terminal.
 */
export const colorsWanted = (stream: { readonly isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean =>
  stream.isTTY === true && (env["NO_COLOR"] ?? "") === "" && env["TERM"] !== "dumb"

// CSI sequences (colours, styles, cursor moves) as effect/cli's help writes them.
const ansiSequence = /\x1b\[[0-9;?]*[ -/]*[@-~]/g

export const stripAnsi = (text: string): string => text.replace(ansiSequence, "")

const plain = (args: ReadonlyArray<unknown>): Array<unknown> => args.map((a) => (typeof a === "string" ? stripAnsi(a) : a))

/**
 * The console with escape sequences removed from what goes to a stream that should have none:
 * `log`/`info`/`debug` go to stdout, `error`/`warn` to stderr, each judged on its own.
 */
export const consoleFor = (
  base: Console.Console,
  streams: { readonly stdout: { readonly isTTY?: boolean }; readonly stderr: { readonly isTTY?: boolean } },
  env: NodeJS.ProcessEnv
): Console.Console => {
  const stdoutPlain = !colorsWanted(streams.stdout, env)
  const stderrPlain = !colorsWanted(streams.stderr, env)
  if (!stdoutPlain && !stderrPlain) return base
  const out = (f: (...args: ReadonlyArray<unknown>) => ReturnType<Console.Console["log"]>) =>
    stdoutPlain ? (...args: ReadonlyArray<unknown>) => f(...plain(args)) : f
  const err = (f: (...args: ReadonlyArray<unknown>) => ReturnType<Console.Console["log"]>) =>
    stderrPlain ? (...args: ReadonlyArray<unknown>) => f(...plain(args)) : f
  return {
    ...base,
    log: out(base.log),
    info: out(base.info),
    debug: out(base.debug),
    error: err(base.error),
    warn: err(base.warn)
  }
}
