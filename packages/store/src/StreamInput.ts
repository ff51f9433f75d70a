import type { Redis } from "iovalkey"
import { Effect } from "effect"
import { InvalidInput } from "./Errors.js"

/** Input checks of ValkeyStreams: bad input is an InvalidInput before anything is sent. */

const STREAM_ID = /^\d+(-\d+)?$/
const MAX_COUNT = 10_000

const invalid = (field: string, message: string) => Effect.fail(new InvalidInput({ field, message }))

const isName = (value: string) => typeof value === "string" && value.length > 0

export const name = (field: string, value: string): Effect.Effect<void, InvalidInput> =>
  isName(value) ? Effect.void : invalid(field, `${field} must be a non-empty string`)

export const streamId = (field: string, value: string): Effect.Effect<void, InvalidInput> =>
  STREAM_ID.test(value) ? Effect.void : invalid(field, `${field} '${value}' is not a stream id (ms or ms-seq)`)

/** A group's start id: `$` (only entries added from now on) or an explicit id such as `0`. */
export const startId = (value: string): Effect.Effect<void, InvalidInput> =>
  value === "$" ? Effect.void : streamId("startId", value)

const isCount = (value: number | undefined) => value === undefined || (Number.isInteger(value) && value >= 1 && value <= MAX_COUNT)

export const count = (value: number | undefined): Effect.Effect<void, InvalidInput> =>
  isCount(value) ? Effect.void : invalid("count", `count must be an integer from 1 to ${MAX_COUNT}`)

export const readGroup = (
  options: {
    readonly streams: ReadonlyArray<string>
    readonly group: string
    readonly consumer: string
    readonly count?: number | undefined
    readonly blockMs?: number | undefined
  },
  connection: Redis | undefined
): Effect.Effect<void, InvalidInput> => {
  // Plain checks, not a generator: the poller reads through here once per round.
  if (options.streams.length === 0) return invalid("streams", "at least one stream is needed")
  if (!isName(options.group)) return name("group", options.group)
  if (!isName(options.consumer)) return name("consumer", options.consumer)
  if (!isCount(options.count)) return count(options.count)
  const block = options.blockMs
  if (block === undefined) return Effect.void
  if (!Number.isInteger(block) || block < 0) return invalid("blockMs", "blockMs must be a non-negative integer")
  if (!connection) {
    return invalid("blockMs", "a blocking read needs a dedicated connection (valkey.dedicated); the shared one would stall every caller")
  }
  // A command timeout shorter than the block would report a normal empty wait as UnknownOutcome.
  const timeout = connection.options.commandTimeout
  if (timeout !== undefined && (block === 0 || timeout <= block)) {
    return invalid("blockMs", `blockMs ${block} needs a connection without a command timeout or one above it (it has ${timeout} ms)`)
  }
  return Effect.void
}
