import { Effect } from "effect"
import { triggerCas } from "@microdcs/lua-scripts"
import { type ConnectionError, type InvalidInput, NotFound, VersionConflict, type WrongType } from "./Errors.js"
import { validateText } from "./Input.js"
import { typedCommand } from "./TypeGuard.js"
import { InvalidTrigger, parseStoredTrigger, parseTriggerInput, type TriggerRow, triggerRowJson } from "./TriggerRow.js"
import { Valkey } from "./Valkey.js"
import { wrongTypeError } from "./WriteReplies.js"

/** A stored row that no longer reads back (written by another version, edited by hand). */
export interface UnreadableTrigger {
  readonly id: string
  readonly problems: ReadonlyArray<string>
}

export interface TriggerList {
  /** Sorted by id. */
  readonly triggers: ReadonlyArray<TriggerRow>
  readonly unreadable: ReadonlyArray<UnreadableTrigger>
}

export interface TriggerWriteOptions {
  /** 0 = create only, n > 0 = the stored version must be n, -1 (default) = whatever is stored. */
  readonly expectedVersion?: number | undefined
  /** The row's `updatedAt`; default now. */
  readonly now?: Date | undefined
}

/** The nudge kind of trigger edits: `nudge:triggers`, message = the trigger's scope. */
export const TRIGGER_NUDGE_KIND = "triggers"

/** Attempts of an unconditional write while other writers keep changing the same row. */
const MAX_ATTEMPTS = 5

type TriggerStoreError = WrongType | ConnectionError

/**
 * The triggers of the island (execution-log.md §4) in one hash, `dag:triggers` (field = trigger
 * id, value = the row as JSON). Tens of rows that every instance holds in memory: `list` reads
 * them all at once. Every write is a compare-and-set of the row the writer read, and publishes
 * `nudge:triggers` in the same script, so an edit reaches every instance at once; a put
 * validates first and stores nothing when any problem is found.
 */
export class TriggerStore extends Effect.Service<TriggerStore>()("@microdcs/store/TriggerStore", {
  effect: Effect.gen(function* () {
    const valkey = yield* Valkey
    const key = yield* Effect.orDie(valkey.key("triggers", {}))
    const nudgeChannel = yield* Effect.orDie(valkey.key("nudge", { kind: TRIGGER_NUDGE_KIND }))

    const readRaw = (id: string) => typedCommand(valkey, "get trigger", key, "hash", (c) => c.hget(key, id))

    const decode = (id: string, text: string): Effect.Effect<TriggerRow> => {
      const parsed = parseStoredTrigger(text)
      // Only this service writes the hash; a row that does not read back is corruption.
      return "trigger" in parsed ? Effect.succeed(parsed.trigger) : Effect.dieMessage(`${key} field ${id} does not read back: ${parsed.problems.join("; ")}`)
    }

    const list: Effect.Effect<TriggerList, TriggerStoreError> = Effect.gen(function* () {
      const stored = yield* typedCommand(valkey, "list triggers", key, "hash", (c) => c.hgetall(key))
      const triggers: Array<TriggerRow> = []
      const unreadable: Array<UnreadableTrigger> = []
      for (const [id, text] of Object.entries(stored).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        const parsed = parseStoredTrigger(text)
        if ("trigger" in parsed) triggers.push(parsed.trigger)
        else unreadable.push({ id, problems: parsed.problems })
      }
      return { triggers, unreadable }
    })

    const get = (id: string): Effect.Effect<TriggerRow, NotFound | InvalidInput | TriggerStoreError> =>
      Effect.gen(function* () {
        yield* validateText("id", id)
        const text = yield* readRaw(id)
        if (text === null) return yield* new NotFound({ key, message: `trigger ${id} does not exist` })
        return yield* decode(id, text)
      })

    /**
     * One compare-and-set: writes `next(stored)` (a row, or `undefined` to delete) if the row is
     * still the one read. An unconditional write (`expectedVersion` -1) reads again when another
     * writer got in between; a conditional one reports the conflict.
     */
    const write = <E>(
      id: string,
      scopeOf: (stored: TriggerRow | undefined) => string,
      expectedVersion: number,
      next: (stored: TriggerRow | undefined) => Effect.Effect<TriggerRow | undefined, E>
    ): Effect.Effect<TriggerRow | undefined, E | NotFound | VersionConflict | TriggerStoreError> =>
      Effect.gen(function* () {
        for (let attempt = 1; ; attempt++) {
          const text = yield* readRaw(id)
          const stored = text === null ? undefined : yield* decode(id, text)
          const actual = stored?.version ?? 0
          if (expectedVersion >= 0 && actual !== expectedVersion) return yield* new VersionConflict({ key: `${key}#${id}`, expected: expectedVersion, actual })
          const row = yield* next(stored)
          const reply = yield* valkey.script(
            triggerCas,
            { triggers: key },
            { id, expected: text ?? "", row: row === undefined ? "" : triggerRowJson(row), nudgeChannel, scope: scopeOf(stored) }
          )
          if (reply.status === "ok") return row
          if (reply.status === "wrongtype") return yield* wrongTypeError(reply)
          if (expectedVersion >= 0 || attempt >= MAX_ATTEMPTS) {
            const now = reply.stored === null ? undefined : parseStoredTrigger(reply.stored)
            return yield* new VersionConflict({ key: `${key}#${id}`, expected: actual, actual: now !== undefined && "trigger" in now ? now.trigger.version : 0 })
          }
        }
      })

    /**
     * Validates and stores a trigger (JSON form, see `parseTriggerInput`): `InvalidTrigger` with
     * every problem, and nothing stored, when it is not valid. Returns the stored row. Moving a
     * trigger to another scope is allowed: a trigger is configuration, not a scope's document.
     */
    const put = (
      input: unknown,
      options: TriggerWriteOptions = {}
    ): Effect.Effect<TriggerRow, InvalidTrigger | VersionConflict | NotFound | TriggerStoreError> =>
      Effect.gen(function* () {
        const parsed = parseTriggerInput(input)
        if ("problems" in parsed) return yield* new InvalidTrigger({ id: parsed.id, problems: parsed.problems })
        const trigger = parsed.trigger
        const updatedAt = (options.now ?? new Date()).toISOString()
        const row = yield* write(trigger.id, () => trigger.scope, options.expectedVersion ?? -1, (stored) => {
          const next: TriggerRow = { ...trigger, version: (stored?.version ?? 0) + 1, updatedAt }
          const size = Buffer.byteLength(triggerRowJson(next))
          return size > valkey.maxDocumentBytes
            ? Effect.fail(new InvalidTrigger({ id: trigger.id, problems: [`the trigger is ${size} bytes, over the limit of ${valkey.maxDocumentBytes}`] }))
            : Effect.succeed(next)
        })
        return row!
      })

    /** Deletes a trigger; `NotFound` when there is none. */
    const remove = (id: string, options: Pick<TriggerWriteOptions, "expectedVersion"> = {}): Effect.Effect<void, NotFound | InvalidInput | VersionConflict | TriggerStoreError> =>
      Effect.gen(function* () {
        yield* validateText("id", id)
        yield* write(id, (stored) => stored?.scope ?? "", options.expectedVersion ?? -1, (stored) =>
          stored === undefined ? Effect.fail(new NotFound({ key, message: `trigger ${id} does not exist` })) : Effect.succeed(undefined)
        )
      })

    /** Switches a trigger on or off; a trigger already so is returned unchanged (nothing written). */
    const setEnabled = (id: string, enabled: boolean, options: TriggerWriteOptions = {}): Effect.Effect<TriggerRow, NotFound | InvalidInput | VersionConflict | TriggerStoreError> =>
      Effect.gen(function* () {
        yield* validateText("id", id)
        const updatedAt = (options.now ?? new Date()).toISOString()
        const current = yield* get(id)
        // Already so: nothing written, no nudge.
        if (current.enabled === enabled && (options.expectedVersion ?? -1) < 0) return current
        const row = yield* write(id, (stored) => stored?.scope ?? "", options.expectedVersion ?? -1, (stored) =>
          stored === undefined
            ? Effect.fail(new NotFound({ key, message: `trigger ${id} does not exist` }))
            : Effect.succeed<TriggerRow>({ ...stored, enabled, version: stored.version + 1, updatedAt })
        )
        return row!
      })

    return {
      list,
      get,
      put,
      remove,
      enable: (id: string, options?: TriggerWriteOptions) => setEnabled(id, true, options),
      disable: (id: string, options?: TriggerWriteOptions) => setEnabled(id, false, options)
    } as const
  })
}) {}
