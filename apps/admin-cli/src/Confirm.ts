import { Prompt } from "effect/cli"
import { Effect } from "effect"
import { Refused } from "./ExitCode.js"

/**
 * The gate in front of every destructive command. `--yes` passes it. Without `--yes` it asks,
 * but only when a person can answer: stdin and stdout both terminals. A script (no terminal)
 * is refused with exit 5 before anything is written, so a forgotten `--yes` never hangs a job
 * or deletes by default.
 */
export const confirmDestructive = (yes: boolean, question: string): Effect.Effect<void, Refused, Prompt.Environment> =>
  Effect.gen(function* () {
    if (yes) return
    if (!process.stdin.isTTY || !process.stdout.isTTY) {
      return yield* new Refused({ message: `refused: ${question} Not confirmed: pass --yes to run it without a terminal.` })
    }
    const confirmed = yield* Prompt.Confirm({ message: question, initial: false }).pipe(
      Effect.catchTag("QuitError", () => Effect.succeed(false))
    )
    if (!confirmed) return yield* new Refused({ message: "not confirmed; nothing was changed" })
  })
