/**
 * The global flags (`--json`, `--url`, `--prefix`) belong to the root command. Operators type
 * them anywhere (`microdcs-admin scopes list --json`); effect/cli accepts a shared flag before or
 * after the subcommand, and @effect/cli (before it) only before, so they are moved in front of
 * the first subcommand before parsing, and `--json` is known even when parsing fails (the error
 * line follows it). Everything after `--` is left alone.
 */

const booleanFlags = new Set(["--json"])
const valueFlags = new Set(["--url", "--prefix"])

export interface HoistedArgs {
  /** The argv to parse: runtime, script, global flags, then the rest in their order. */
  readonly argv: ReadonlyArray<string>
  /** Whether `--json` was given anywhere (error output follows it even when parsing fails). */
  readonly json: boolean
}

/** `argv` as `process.argv` gives it: the first two entries are the runtime and the script. */
export const hoistGlobalFlags = (argv: ReadonlyArray<string>): HoistedArgs => {
  const head = argv.slice(0, 2)
  const globals: Array<string> = []
  const rest: Array<string> = []
  let json = false
  // `pnpm start -- scopes list` passes the `--` on; in front of everything it separates nothing.
  const args = argv[2] === "--" ? argv.slice(3) : argv.slice(2)
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === "--") {
      rest.push(...args.slice(i))
      break
    }
    const name = arg.includes("=") ? arg.slice(0, arg.indexOf("=")) : arg
    if (booleanFlags.has(arg)) {
      globals.push(arg)
      json = json || arg === "--json"
    } else if (valueFlags.has(name) && arg.includes("=")) {
      globals.push(name, arg.slice(arg.indexOf("=") + 1))
    } else if (valueFlags.has(arg) && i + 1 < args.length) {
      globals.push(arg, args[i + 1]!)
      i++
    } else {
      rest.push(arg)
    }
  }
  return { argv: [...head, ...globals, ...rest], json }
}
