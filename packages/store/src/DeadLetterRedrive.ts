import { Effect, Context, Layer } from "effect"
import { redriveDeadLetter } from "@microdcs/lua-scripts"
import { type ConnectionError, InvalidInput, NotFound, WrongType } from "./Errors.js"
import { validateStreamId } from "./Input.js"
import { SCOPE_STREAMS, scopeStreamFamily } from "./ScopeStreams.js"
import { typedCommand } from "./TypeGuard.js"
import { Valkey, type ValkeyService } from "./Valkey.js"

/** What one redrive did. `skipped` entries carry no fields of their own (only metadata), so they stay. */
export interface RedriveOutcome {
  readonly deadLetterId: string
  readonly status: "redriven" | "skipped"
  /** The new entry's id in the source stream (redriven only). */
  readonly newId?: string | undefined
  readonly stream: string
}

/** A kind no scope stream has: its dead letters could go back nowhere. */
const knownKind = (kind: string) =>
  scopeStreamFamily(kind) !== undefined
    ? Effect.void
    : Effect.fail(new InvalidInput({ field: "kind", message: `no stream is consumed as ${JSON.stringify(kind)}: the kinds are ${SCOPE_STREAMS.map((s) => s.kind).join(", ")}` }))

export interface RedriveSummary {
  readonly redriven: number
  readonly skipped: number
  readonly outcomes: ReadonlyArray<RedriveOutcome>
}

type Entries = ReadonlyArray<[string, ReadonlyArray<string>]>

/** Dead letters per read while redriving them all. */
const PAGE = 100

/** The source stream a dead letter names, checked to be the kind's stream of this island and scope. */
const sourceOf = (valkey: ValkeyService, deadKey: string, kind: string, id: string, scope: string) =>
  Effect.gen(function* () {
    const entries = (yield* typedCommand(valkey, "XRANGE dead letter", deadKey, "stream", (c) => c.call("XRANGE", deadKey, id, id))) as Entries
    const fields = entries[0]?.[1]
    if (fields === undefined) return yield* new NotFound({ key: deadKey, message: `no dead letter ${id} in ${deadKey}` })
    const stream = fields[0] === "dlq.stream" ? fields[1] : undefined
    const parsed = stream === undefined ? undefined : valkey.keys.parse(stream)
    const parts = parsed?.parts as { readonly scope?: string } | undefined
    if (stream === undefined || parsed === undefined || parsed.family !== scopeStreamFamily(kind) || parts?.scope !== scope) {
      return yield* new InvalidInput({ field: "deadLetter", message: `dead letter ${id} names no stream of scope ${scope} on this island: ${stream ?? "(none)"}` })
    }
    return stream
  })

const redriveOne = (valkey: ValkeyService, deadKey: string, kind: string, id: string, scope: string) =>
  Effect.gen(function* () {
    const stream = yield* sourceOf(valkey, deadKey, kind, id, scope)
    const reply = yield* valkey.script(redriveDeadLetter, { deadLetter: deadKey, stream }, { id })
    switch (reply.status) {
      case "ok":
        return { deadLetterId: id, status: "redriven", newId: reply.newId, stream } satisfies RedriveOutcome
      case "nofields":
        return { deadLetterId: id, status: "skipped", stream } satisfies RedriveOutcome
      case "notfound":
        return yield* new NotFound({ key: deadKey, message: `no dead letter ${id} in ${deadKey}` })
      case "otherstream":
        // Read and script disagree only if the entry was replaced meanwhile: refuse, change nothing.
        return yield* new InvalidInput({ field: "deadLetter", message: `dead letter ${id} moved to name ${reply.stream}` })
      case "wrongtype":
        return yield* new WrongType({ key: reply.key, expected: reply.expected, actual: reply.actual })
    }
  })

/** Redrives one dead letter of `kind` (`changes`, `sfc`, `dagcommit`: see `SCOPE_STREAMS`) and `scope` by its id. */
const redrive = (
  valkey: ValkeyService,
  kind: string,
  scope: string,
  id: string
): Effect.Effect<RedriveOutcome, InvalidInput | NotFound | WrongType | ConnectionError> =>
  Effect.gen(function* () {
    yield* knownKind(kind)
    yield* validateStreamId("id", id)
    const deadKey = yield* valkey.key("deadLetterStream", { kind, scope })
    return yield* redriveOne(valkey, deadKey, kind, id, scope)
  })

/** Redrives one page of dead letters after `after`; the page's entries come back to find the next. */
const redrivePage = (valkey: ValkeyService, deadKey: string, kind: string, scope: string, after: string, outcomes: Array<RedriveOutcome>) =>
  Effect.gen(function* () {
    const page = (yield* typedCommand(valkey, "XRANGE dead letters", deadKey, "stream", (c) => c.call("XRANGE", deadKey, after, "+", "COUNT", PAGE))) as Entries
    for (const [id] of page) {
      // Gone meanwhile (another operator redrove it): nothing left to do for that one.
      const outcome = yield* redriveOne(valkey, deadKey, kind, id, scope).pipe(Effect.catchTag("NotFound", () => Effect.succeed(undefined)))
      if (outcome !== undefined) outcomes.push(outcome)
    }
    return page
  })

/** Redrives every dead letter of `kind` and `scope`, oldest first, one script per entry. */
const redriveAll = (valkey: ValkeyService, kind: string, scope: string): Effect.Effect<RedriveSummary, InvalidInput | WrongType | ConnectionError> =>
  Effect.gen(function* () {
    yield* knownKind(kind)
    const deadKey = yield* valkey.key("deadLetterStream", { kind, scope })
    const outcomes: Array<RedriveOutcome> = []
    let after = "-"
    for (;;) {
      const page = yield* redrivePage(valkey, deadKey, kind, scope, after, outcomes)
      if (page.length < PAGE) break
      after = `(${page[page.length - 1]![0]}`
    }
    return {
      redriven: outcomes.filter((o) => o.status === "redriven").length,
      skipped: outcomes.filter((o) => o.status === "skipped").length,
      outcomes
    }
  })

/**
 * Moves dead letters back to the end of the stream they came from, so their consumer group
 * processes them again once the cause is fixed (the operator's "redrive"). Each move is one
 * script: the entry is re-added and removed from the dead-letter stream together.
 */
export class DeadLetterRedrive extends Context.Service<DeadLetterRedrive>()("@microdcs/store/DeadLetterRedrive", {
  make: Effect.map(Valkey, (valkey) => ({
    redrive: (kind: string, scope: string, id: string) => redrive(valkey, kind, scope, id),
    redriveAll: (kind: string, scope: string) => redriveAll(valkey, kind, scope)
  }))
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
