import { Console, Context, Effect } from "effect"

/** How results are printed: aligned tables for people, JSON for scripts (`--json`). */
export class Output extends Context.Service<Output, { readonly json: boolean }>()("@microdcs/admin-cli/Output") {}

/**
 * Prints one command result on stdout: `value` as JSON with `--json`, else the text `human`
 * renders. Both describe the same result; the JSON is the contract for scripts.
 */
export const emit = (value: unknown, human: () => string): Effect.Effect<void, never, Output> =>
  Effect.flatMap(Output, (output) => Console.log(output.json ? JSON.stringify(value, null, 2) : human()))

/** A note for people on stderr (never mixed into the JSON on stdout). */
export const note = (text: string): Effect.Effect<void> => Console.error(text)
