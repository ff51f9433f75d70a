import { Command, Options } from "@effect/cli"

/**
 * The root command and its global options. Subcommands read them with `yield* root`; main.ts
 * attaches the subcommands. Kept apart from main.ts so command files can import it without a cycle.
 */
export const globalOptions = {
  url: Options.text("url").pipe(
    Options.withDescription("Valkey URL (redis://[user:password@]host:port[/db], rediss:// for TLS); default VALKEY_URL"),
    Options.optional
  ),
  prefix: Options.text("prefix").pipe(Options.withDescription("key prefix of the island; default VALKEY_PREFIX or microdcs"), Options.optional),
  json: Options.boolean("json").pipe(Options.withDescription("print machine-readable JSON on stdout"))
}

export const root = Command.make("microdcs-admin", globalOptions)
