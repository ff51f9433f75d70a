import { Effect } from "effect"
import type { ConnectionError, InvalidInput, NotFound, WrongType } from "./Errors.js"
import { runStream } from "./StreamCommand.js"
import { deadLetterKey } from "./StreamDeadLetters.js"
import { type DeadLetterEntry, decodeDeadLetter } from "./StreamEntries.js"
import * as Check from "./StreamInput.js"
import type { ValkeyService } from "./Valkey.js"

/**
 * The newest dead letters of one poller kind and scope, newest first (XREVRANGE), moved at or
 * before `atOrBefore` (epoch ms; a dead letter's id is the time it was moved): at most `count`,
 * whatever the stream's length. A missing stream has none.
 */
export const newestDeadLetters = (
  valkey: ValkeyService,
  kind: string,
  scope: string,
  page: { readonly atOrBefore?: number | undefined; readonly count: number }
): Effect.Effect<ReadonlyArray<DeadLetterEntry>, InvalidInput | WrongType | NotFound | ConnectionError> =>
  Effect.gen(function* () {
    yield* Check.count(page.count)
    const key = yield* deadLetterKey(valkey, kind, scope)
    // An id of milliseconds only ends at that millisecond's last sequence number.
    const end = page.atOrBefore === undefined ? "+" : String(Math.max(0, Math.floor(page.atOrBefore)))
    const raw = yield* runStream(valkey, "XREVRANGE dead letters", [key], (c) => c.call("XREVRANGE", key, end, "-", "COUNT", page.count))
    return (raw as ReadonlyArray<unknown>).map(decodeDeadLetter)
  })
