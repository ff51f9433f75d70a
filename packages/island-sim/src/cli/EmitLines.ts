import { createInterface } from "node:readline"
import { Effect, Result, Stream } from "effect"
import type { EmitOptions, Station } from "../Station.js"

/** One `emit` line read from stdin. */
export interface EmitLine {
  readonly scope: string
  readonly type: string
  readonly options: EmitOptions
}

export const EMIT_USAGE = "emit <scope> <type> [job=<jobid>] [<json data>]"

/**
 * `emit <scope> <type> [job=<jobid>] [<json data>]`: a pull event on demand. Without data the
 * script's for the type is sent; an empty line or one starting with `#` is nothing.
 */
export const parseEmitLine = (line: string): Result.Result<EmitLine | undefined, string> => {
  const text = line.trim()
  if (text === "" || text.startsWith("#")) return Result.succeed(undefined)
  const match = /^emit\s+(\S+)\s+(\S+)(?:\s+job=(\S+))?(?:\s+(.+))?$/.exec(text)
  if (match === null) return Result.fail(`not understood: '${text}' (${EMIT_USAGE})`)
  const [, scope, type, jobId, json] = match
  let data: unknown
  if (json !== undefined) {
    try {
      data = JSON.parse(json)
    } catch (error) {
      return Result.fail(`the data is not JSON: ${error instanceof Error ? error.message : String(error)}`)
    }
  }
  return Result.succeed({ scope: scope!, type: type!, options: { ...(jobId !== undefined ? { jobId } : {}), ...(json !== undefined ? { data } : {}) } })
}

/** Reads `emit` lines from stdin until it closes; each is emitted, or its problem printed on stderr. */
export const emitFromStdin = (station: Station) =>
  Stream.fromAsyncIterable(createInterface({ input: process.stdin }), (error) => error).pipe(
    Stream.runForEach((line) => {
      const parsed = parseEmitLine(line)
      if (Result.isFailure(parsed)) return Effect.sync(() => process.stderr.write(`${parsed.failure}\n`))
      const emit = parsed.success
      if (emit === undefined) return Effect.void
      return station.emit(emit.scope, emit.type, emit.options).pipe(
        Effect.andThen(Effect.sync(() => process.stderr.write(`emitted ${emit.type} to ${emit.scope}\n`))),
        Effect.catch((error) => Effect.sync(() => process.stderr.write(`not emitted: ${error.message}\n`)))
      )
    }),
    Effect.ignore
  )
