import { Effect, Option } from "effect"
import type { ConnectionError, UnknownOutcome, WrongType } from "./Errors.js"
import { isReplyError } from "./FailureKind.js"
import { typedCommand } from "./TypeGuard.js"
import type { ValkeyService } from "./Valkey.js"
import { command } from "./RawDoor.js"

/**
 * The unknown-outcome check: did a write whose reply was lost land? The
 * document's `op` names only its last write, so when another write followed, the answer comes
 * from the change stream, where every document write leaves an entry with its op id in the
 * same script. A check that cannot prove either answer says so: a false "not landed" would
 * make the caller's retry apply the change twice.
 */
export type WriteOutcome<A> =
  | { readonly _tag: "Landed"; readonly value: A }
  | { readonly _tag: "NotLanded" }
  | { readonly _tag: "Undetermined" }

export const landed = <A>(value: A): WriteOutcome<A> => ({ _tag: "Landed", value })
const notLanded: WriteOutcome<never> = { _tag: "NotLanded" }
const undetermined: WriteOutcome<never> = { _tag: "Undetermined" }

/** Where a document's writes are recorded: its scope's change stream, and its kind and id there. */
export interface ChangeRecord {
  readonly changes: string
  readonly kind: string
  readonly id: string
}

/** Server clock steps and rounding the time window of a search must survive. */
const CLOCK_MARGIN_MS = 1000
const PAGE = 500

type StreamPage = ReadonlyArray<readonly [string, ReadonlyArray<string>]>

/**
 * The version the write `op` of (kind, id) produced, searching the change stream newest first
 * down to `startMs` (server ms; `undefined` = everything retained).
 */
const findInChanges = (
  valkey: ValkeyService,
  record: ChangeRecord,
  op: string,
  startMs: number | undefined
): Effect.Effect<Option.Option<number>, WrongType | ConnectionError> =>
  Effect.gen(function* () {
    const start = startMs === undefined ? "-" : String(Math.max(0, Math.floor(startMs)))
    let end = "+"
    for (;;) {
      const page = (yield* typedCommand(valkey, "find operation in changes", record.changes, "stream", (c) =>
        c.xrevrange(record.changes, end, start, "COUNT", PAGE)
      )) as StreamPage
      for (const [, fields] of page) {
        const entry = fieldsOf(fields)
        if (entry["op"] === op && entry["id"] === record.id && entry["kind"] === record.kind && entry["v"] !== undefined) {
          return Option.some(Number(entry["v"]))
        }
      }
      if (page.length < PAGE) return Option.none()
      end = `(${page[page.length - 1]![0]}`
    }
  })

const fieldsOf = (flat: ReadonlyArray<string>): Record<string, string> => {
  const out: Record<string, string> = {}
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i]!] = flat[i + 1]!
  return out
}

/** Whether the change stream still holds every entry at or after `startMs` (trimming removes the oldest). */
const retainedSince = (valkey: ValkeyService, changes: string, startMs: number): Effect.Effect<boolean, ConnectionError> =>
  command(valkey, "change stream extent", (c) =>
      c.xinfo("STREAM", changes).catch((error: unknown) => {
        // No stream: nothing was ever written to the scope, so nothing is missing.
        if (isReplyError(error) && /no such key/i.test(error.message)) return null
        throw error
      })
    )
    .pipe(
      Effect.map((raw) => {
        if (!Array.isArray(raw)) return true
        const info = new Map<string, unknown>()
        for (let i = 0; i + 1 < raw.length; i += 2) info.set(String(raw[i]), raw[i + 1])
        if (Number(info.get("entries-added")) === Number(info.get("length"))) return true
        const first = info.get("first-entry")
        const firstMs = Array.isArray(first) ? Number(String(first[0]).split("-")[0]) : Number.POSITIVE_INFINITY
        return firstMs <= startMs
      })
    )

export interface WriteInDoubt {
  /** The document key. */
  readonly key: string
  readonly op: string
  /** The expected version the write was sent with. */
  readonly expectedVersion: number
  /** The change stream the write appends to; without one only the document itself is asked. */
  readonly record?: ChangeRecord | undefined
  /** How long ago (at least) the write was sent, in ms. */
  readonly elapsedMs: number
}

/**
 * Resolves one write in doubt. Landed: the document's last write or a change entry carries
 * its op. Not landed: no entry in a change stream window that covers the whole time since it
 * was sent, or (without a complete window) the document still has the version the write
 * expected, so a resend is decided by the version check. Anything else is undetermined.
 */
export const writeOutcome = (valkey: ValkeyService, write: WriteInDoubt): Effect.Effect<WriteOutcome<number>, WrongType | ConnectionError> =>
  Effect.gen(function* () {
    const [[storedOp, storedVersion], [seconds, micros]] = yield* typedCommand(valkey, "operation check", write.key, "hash", (c) =>
      Promise.all([c.hmget(write.key, "op", "v"), c.time()])
    )
    if (storedOp === write.op && storedVersion) return landed(Number(storedVersion))
    if (write.record) {
      const serverNowMs = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
      const startMs = serverNowMs - write.elapsedMs - CLOCK_MARGIN_MS
      const found = yield* findInChanges(valkey, write.record, write.op, startMs)
      if (Option.isSome(found)) return landed(found.value)
      if (yield* retainedSince(valkey, write.record.changes, startMs)) return notLanded
    }
    const current = storedVersion ? Number(storedVersion) : 0
    return write.expectedVersion >= 0 && current === write.expectedVersion ? notLanded : undetermined
  })

/**
 * The public unknown-outcome check of a DAO: `Some(version)` when the write `op` of the
 * document landed, as its last write or, if others followed, as an entry still in the
 * document's change stream; `None` when neither shows it.
 */
export const operationLanded = (
  valkey: ValkeyService,
  key: string,
  op: string,
  document?: { readonly kind: string; readonly id: string }
): Effect.Effect<Option.Option<number>, WrongType | ConnectionError> =>
  Effect.gen(function* () {
    const [storedOp, v, scope] = yield* typedCommand(valkey, "operation check", key, "hash", (c) => c.hmget(key, "op", "v", "scope"))
    if (storedOp === op && v) return Option.some(Number(v))
    const changes = document && scope ? valkey.keys.key("changes", { scope }) : undefined
    if (document === undefined || typeof changes !== "string") return Option.none()
    return yield* findInChanges(valkey, { changes, kind: document.kind, id: document.id }, op, undefined)
  })

/**
 * Runs a write whose outcome may be unknown. On `UnknownOutcome` it asks `check` (on the same
 * connection, so ordered after the write) how long after sending: if the write landed its
 * result stands; if it provably did not, it is sent once more. If the check cannot tell or
 * fails itself, the original `UnknownOutcome` is what the caller sees.
 */
export const resolveUnknownOutcome = <A, E>(
  write: Effect.Effect<A, E | UnknownOutcome>,
  check: (elapsedMs: number) => Effect.Effect<WriteOutcome<A>, WrongType | ConnectionError>
): Effect.Effect<A, E | UnknownOutcome | ConnectionError> =>
  Effect.suspend(() => {
    const sentAt = performance.now()
    return write.pipe(
      Effect.catchIf(
        (e): e is UnknownOutcome => (e as { _tag?: string })._tag === "UnknownOutcome",
        (unknown) =>
          check(performance.now() - sentAt).pipe(
            Effect.mapError(() => unknown),
            Effect.flatMap((outcome) => {
              switch (outcome._tag) {
                case "Landed":
                  return Effect.succeed(outcome.value)
                case "NotLanded":
                  return write
                case "Undetermined":
                  return Effect.fail(unknown)
              }
            })
          )
      )
    )
  })
