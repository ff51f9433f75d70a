import { Command, Flag } from "effect/cli"

/**
 * The root command and its global flags. Subcommands read them with `yield* root`; main.ts
 * attaches the subcommands. Kept apart from main.ts so command files can import it without a cycle.
 * They are shared flags: accepted before or after the subcommand's name.
 */
export const globalOptions = {
  url: Flag.String("url").pipe(
    Flag.withMetavar("URL"),
    Flag.withDescription(
      "The island's Valkey: redis://[user:password@]host:port[/db], or rediss:// for TLS. Default: VALKEY_URL (or VALKEY_SENTINELS with VALKEY_SENTINEL_NAME), else redis://127.0.0.1:6379."
    ),
    Flag.optional
  ),
  prefix: Flag.String("prefix").pipe(
    Flag.withMetavar("PREFIX"),
    Flag.withDescription("The island's key prefix, the VALKEY_PREFIX its daemons run with. Default: VALKEY_PREFIX, else microdcs."),
    Flag.optional
  ),
  json: Flag.Boolean("json").pipe(
    Flag.withDescription("Print machine-readable JSON on stdout (errors as one JSON line on stderr)."),
    Flag.withDefault(false)
  )
}

export const root = Command.make("microdcs-admin").pipe(Command.withSharedFlags(globalOptions))
