import type { Redis } from "iovalkey"
import { Effect } from "effect"
import { deadLetterEntry } from "@microdcs/lua-scripts"
import { type ConnectionError, type InvalidInput, type NotFound, WrongType } from "./Errors.js"
import { command } from "./RawDoor.js"
import { runStream } from "./StreamCommand.js"
import { type DeadLetterEntry, decodeDeadLetter } from "./StreamEntries.js"
import * as Check from "./StreamInput.js"
import type { ValkeyService } from "./Valkey.js"

export interface DeadLetterMove {
  readonly stream: string
  /** The dead-letter stream (see `deadLetterKey`). */
  readonly deadLetter: string
  readonly group: string
  /** The consumer that must still own the entry; if another one claimed it, nothing moves. */
  readonly consumer: string
  readonly id: string
  readonly error: string
}

export type DeadLetterOutcome =
  | { readonly status: "moved"; readonly deadLetterId: string }
  | { readonly status: "notpending" }
  | { readonly status: "notowner"; readonly owner: string }

export interface DeadLetterStreamInfo {
  readonly key: string
  readonly kind: string
  readonly scope: string
  readonly length: number
}

export interface DeadLetterPage {
  readonly entries: ReadonlyArray<DeadLetterEntry>
  /** Pass as `after` for the next page; `null` on the last one. */
  readonly next: string | null
}

/** Copies a pending entry with its last error to `deadLetter` and acknowledges it, atomically. */
export const deadLetter = (valkey: ValkeyService, move: DeadLetterMove): Effect.Effect<DeadLetterOutcome, WrongType | ConnectionError> =>
  Effect.gen(function* () {
    const reply = yield* valkey.script(deadLetterEntry, { stream: move.stream, deadLetter: move.deadLetter }, move)
    switch (reply.status) {
      case "ok":
        return { status: "moved", deadLetterId: reply.deadLetterId } as const
      case "wrongtype":
        return yield* new WrongType({ key: reply.key, expected: reply.expected, actual: reply.actual })
      default:
        return reply
    }
  })

export const deadLetterKey = (valkey: ValkeyService, kind: string, scope: string) => valkey.key("deadLetterStream", { kind, scope })

/** Every dead-letter stream key of this prefix with its length, sorted by key. */
const scanDeadLetterStreams = async (valkey: ValkeyService, c: Redis) => {
  const found = new Set<string>()
  let cursor = "0"
  do {
    const [next, keys] = await c.scan(cursor, "MATCH", valkey.keys.pattern("deadLetterStream"), "COUNT", 1000, "TYPE", "stream")
    cursor = next
    keys.forEach((k) => found.add(k))
  } while (cursor !== "0")
  const keys = [...found].sort()
  const lengths = await Promise.all(keys.map((k) => c.xlen(k)))
  return keys.map((key, i) => ({ key, length: lengths[i]! }))
}

/** Every dead-letter stream of this prefix (optionally of one kind), with its length. A SCAN: for admin use. */
export const listDeadLetters = (valkey: ValkeyService, kind?: string): Effect.Effect<ReadonlyArray<DeadLetterStreamInfo>, ConnectionError> =>
  command(valkey, "scan dead letters", (c) => scanDeadLetterStreams(valkey, c)).pipe(
    Effect.map((rows) =>
      rows.flatMap(({ key, length }) => {
        const parsed = valkey.keys.parse(key)
        if (parsed?.family !== "deadLetterStream") return []
        const parts = parsed.parts as { readonly kind: string; readonly scope: string }
        return kind === undefined || parts.kind === kind ? [{ key, kind: parts.kind, scope: parts.scope, length }] : []
      })
    )
  )

/** Dead letters of one kind and scope, oldest first, `count` per page after the id `after`. */
export const readDeadLetters = (
  valkey: ValkeyService,
  kind: string,
  scope: string,
  page: { readonly after?: string | undefined; readonly count?: number | undefined } = {}
): Effect.Effect<DeadLetterPage, InvalidInput | WrongType | NotFound | ConnectionError> =>
  Effect.gen(function* () {
    yield* Check.count(page.count)
    if (page.after !== undefined) yield* Check.streamId("after", page.after)
    const key = yield* deadLetterKey(valkey, kind, scope)
    const count = page.count ?? 100
    const start = page.after === undefined ? "-" : `(${page.after}`
    const raw = yield* runStream(valkey, "XRANGE dead letters", [key], (c) => c.call("XRANGE", key, start, "+", "COUNT", count + 1))
    const entries = (raw as ReadonlyArray<unknown>).map(decodeDeadLetter)
    const more = entries.length > count
    const shown = more ? entries.slice(0, count) : entries
    return { entries: shown, next: more ? shown[shown.length - 1]!.id : null }
  })
