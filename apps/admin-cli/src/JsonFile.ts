import { FileSystem } from "effect"
import { Effect } from "effect"
import { UsageError } from "./ExitCode.js"

/** Reads a JSON file named on the command line; one that cannot be read or is not JSON is a usage error naming it. */
export const readJsonFile = (path: string) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(path).pipe(Effect.mapError((e) => new UsageError({ message: `cannot read ${path}: ${e.message}` })))
    const parsed = yield* Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: (e) => new UsageError({ message: `${path} is not JSON: ${(e as Error).message}` })
    })
    return { text, parsed }
  })
