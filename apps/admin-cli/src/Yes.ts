import { Options } from "effect/cli"

/** `--yes` / `-y`: confirms a destructive command without a prompt (required without a terminal). */
export const yesOption = Options.boolean("yes").pipe(
  Options.withAlias("y"),
  Options.withDescription("confirm without asking (required when stdin is not a terminal)")
)
