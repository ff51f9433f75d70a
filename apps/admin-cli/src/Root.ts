import { Command, Options } from "effect/cli"

/**
 * The root command and its global options. Subcommands read them with `yield* root`; main.ts
 * attaches the subcommands. Kept apart from main.ts so command files can import it without a cycle.
 */
export const globalOptions = {
  url: Options.text("url").pipe(
    Options.withPseudoName("URL"),
    Options.withDescription(
      "The island's Valkey: redis://[user:password@]host:port[/db], or rediss:// for TLS. Default: VALKEY_URL (or VALKEY_SENTINELS with VALKEY_SENTINEL_NAME), else redis://127.0.0.1:6379."
    ),
    Options.optional
  ),
  prefix: Options.text("prefix").pipe(
    Options.withPseudoName("PREFIX"),
    Options.withDescription("The island's key prefix, the VALKEY_PREFIX its daemons run with. Default: VALKEY_PREFIX, else microdcs."),
    Options.optional
  ),
  json: Options.boolean("json").pipe(Options.withDescription("Print machine-readable JSON on stdout (errors as one JSON line on stderr)."))
}

export const root = Command.make("microdcs-admin", globalOptions)
