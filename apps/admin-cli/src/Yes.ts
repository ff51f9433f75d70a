import { Flag } from "effect/cli"

/** `--yes` / `-y`: confirms a destructive command without a prompt (required without a terminal). */
export const yesOption = Flag.Boolean("yes").pipe(
  Flag.withAlias("y"),
  Flag.withDescription("confirm without asking (required when stdin is not a terminal)"),
  Flag.withDefault(false)
)
