import { randomUUID } from "node:crypto"
import { Effect, Context, Layer } from "effect"
import { triggerCas } from "@microdcs/lua-scripts"
import { type ConnectionError, type InvalidInput, NotFound, VersionConflict, type WrongType } from "./Errors.js"
import { validateText } from "./Input.js"
import { typedCommand } from "./TypeGuard.js"
import { triggerEditMessage } from "./TriggerEdit.js"
import { InvalidTrigger, parseStoredTrigger, parseTriggerInput, type TriggerRow, triggerRowJson } from "./TriggerRow.js"
import { command } from "./RawDoor.js"
import { Valkey, type ValkeyService } from "./Valkey.js"
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
  /**
   * Whether the writer announces the edit on the bus itself (a daemon does); the nudge says so, and
   * the daemons relay an edit nobody announces, once (`claimAnnouncement`). Default false.
   */
  readonly announced?: boolean | undefined
}

/** The nudge kind of trigger edits: `nudge:triggers`, message = the edit (`TriggerEdit`, JSON). */
export const TRIGGER_NUDGE_KIND = "triggers"

/** How long an edit's announcement claim is kept: far beyond a nudge's way to every listener. */
const ANNOUNCEMENT_CLAIM_MS = 3_600_000

/** Attempts of an unconditional write while other writers keep changing the same row. */
const MAX_ATTEMPTS = 5

type TriggerStoreError = WrongType | ConnectionError

/** What the trigger store's functions share: the connection, the `dag:triggers` key and the nudge channel. */
interface TriggerDeps {
  readonly valkey: ValkeyService
  readonly key: string
  readonly nudgeChannel: string
}

const readRaw = (deps: TriggerDeps, id: string) => typedCommand(deps.valkey, "get trigger", deps.key, "hash", (c) => c.hget(deps.key, id))

const decode = (deps: TriggerDeps, id: string, text: string): Effect.Effect<TriggerRow> => {
  const parsed = parseStoredTrigger(text)
  // Only this service writes the hash; a row that does not read back is corruption.
  return "trigger" in parsed ? Effect.succeed(parsed.trigger) : Effect.die(new Error(`${deps.key} field ${id} does not read back: ${parsed.problems.join("; ")}`))
}

const list = (deps: TriggerDeps): Effect.Effect<TriggerList, TriggerStoreError> =>
  Effect.gen(function* () {
    const stored = yield* typedCommand(deps.valkey, "list triggers", deps.key, "hash", (c) => c.hgetall(deps.key))
    const triggers: Array<TriggerRow> = []
    const unreadable: Array<UnreadableTrigger> = []
    for (const [id, text] of Object.entries(stored).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const parsed = parseStoredTrigger(text)
      if ("trigger" in parsed) triggers.push(parsed.trigger)
      else unreadable.push({ id, problems: parsed.problems })
    }
    return { triggers, unreadable }
  })

const get = (deps: TriggerDeps, id: string): Effect.Effect<TriggerRow, NotFound | InvalidInput | TriggerStoreError> =>
  Effect.gen(function* () {
    yield* validateText("id", id)
    const text = yield* readRaw(deps, id)
    if (text === null) return yield* new NotFound({ key: deps.key, message: `trigger ${id} does not exist` })
    return yield* decode(deps, id, text)
  })

/** The nudge's message of one edit: `row` written over `stored` (`undefined` row: deleted), with a new edit id. */
const editMessage = (id: string, row: TriggerRow | undefined, stored: TriggerRow | undefined, announced: boolean | undefined) =>
  triggerEditMessage({
    id,
    scope: row?.scope ?? stored?.scope ?? "",
    change: row === undefined ? "delete" : "put",
    ...(row === undefined ? {} : { version: row.version }),
    edit: randomUUID(),
    announced: announced === true
  })

/** The conflict of a compare-and-set that lost: the version read, and the one stored now. */
const lostConflict = (deps: TriggerDeps, id: string, actual: number, storedNow: string | null) => {
  const now = storedNow === null ? undefined : parseStoredTrigger(storedNow)
  return new VersionConflict({ key: `${deps.key}#${id}`, expected: actual, actual: now !== undefined && "trigger" in now ? now.trigger.version : 0 })
}

/**
 * One compare-and-set: writes `next(stored)` (a row, or `undefined` to delete) if the row is
 * still the one read. An unconditional write (`expectedVersion` -1) reads again when another
 * writer got in between; a conditional one reports the conflict.
 */
const write = <E>(
  deps: TriggerDeps,
  id: string,
  options: { readonly expectedVersion?: number | undefined; readonly announced?: boolean | undefined },
  next: (stored: TriggerRow | undefined) => Effect.Effect<TriggerRow | undefined, E>
): Effect.Effect<TriggerRow | undefined, E | NotFound | VersionConflict | TriggerStoreError> =>
  Effect.gen(function* () {
    const expectedVersion = options.expectedVersion ?? -1
    for (let attempt = 1; ; attempt++) {
      const text = yield* readRaw(deps, id)
      const stored = text === null ? undefined : yield* decode(deps, id, text)
      const actual = stored?.version ?? 0
      if (expectedVersion >= 0 && actual !== expectedVersion) return yield* new VersionConflict({ key: `${deps.key}#${id}`, expected: expectedVersion, actual })
      const row = yield* next(stored)
      const message = editMessage(id, row, stored, options.announced)
      const args = { id, expected: text ?? "", row: row === undefined ? "" : triggerRowJson(row), nudgeChannel: deps.nudgeChannel, message }
      const reply = yield* deps.valkey.script(triggerCas, { triggers: deps.key }, args)
      if (reply.status === "ok") return row
      if (reply.status === "wrongtype") return yield* wrongTypeError(reply)
      if (expectedVersion >= 0 || attempt >= MAX_ATTEMPTS) return yield* lostConflict(deps, id, actual, reply.stored)
    }
  })

/**
 * Validates and stores a trigger (JSON form, see `parseTriggerInput`): `InvalidTrigger` with
 * every problem, and nothing stored, when it is not valid. Returns the stored row. Moving a
 * trigger to another scope is allowed: a trigger is configuration, not a scope's document.
 */
const put = (deps: TriggerDeps, input: unknown, options: TriggerWriteOptions = {}): Effect.Effect<TriggerRow, InvalidTrigger | VersionConflict | NotFound | TriggerStoreError> =>
  Effect.gen(function* () {
    const parsed = parseTriggerInput(input)
    if ("problems" in parsed) return yield* new InvalidTrigger({ id: parsed.id, problems: parsed.problems })
    const trigger = parsed.trigger
    const updatedAt = (options.now ?? new Date()).toISOString()
    const { maxDocumentBytes } = deps.valkey
    const row = yield* write(deps, trigger.id, options, (stored) => {
      const next: TriggerRow = { ...trigger, version: (stored?.version ?? 0) + 1, updatedAt }
      const size = Buffer.byteLength(triggerRowJson(next))
      return size > maxDocumentBytes
        ? Effect.fail(new InvalidTrigger({ id: trigger.id, problems: [`the trigger is ${size} bytes, over the limit of ${maxDocumentBytes}`] }))
        : Effect.succeed(next)
    })
    return row!
  })

/** Deletes a trigger; `NotFound` when there is none. */
const remove = (
  deps: TriggerDeps,
  id: string,
  options: Pick<TriggerWriteOptions, "expectedVersion" | "announced"> = {}
): Effect.Effect<void, NotFound | InvalidInput | VersionConflict | TriggerStoreError> =>
  Effect.gen(function* () {
    yield* validateText("id", id)
    yield* write(deps, id, options, (stored) =>
      stored === undefined ? Effect.fail(new NotFound({ key: deps.key, message: `trigger ${id} does not exist` })) : Effect.succeed(undefined)
    )
  })

/** Switches a trigger on or off; a trigger already so is returned unchanged (nothing written). */
const setEnabled = (
  deps: TriggerDeps,
  id: string,
  enabled: boolean,
  options: TriggerWriteOptions = {}
): Effect.Effect<TriggerRow, NotFound | InvalidInput | VersionConflict | TriggerStoreError> =>
  Effect.gen(function* () {
    yield* validateText("id", id)
    const updatedAt = (options.now ?? new Date()).toISOString()
    const current = yield* get(deps, id)
    // Already so: nothing written, no nudge.
    if (current.enabled === enabled && (options.expectedVersion ?? -1) < 0) return current
    const row = yield* write(deps, id, options, (stored) =>
      stored === undefined
        ? Effect.fail(new NotFound({ key: deps.key, message: `trigger ${id} does not exist` }))
        : Effect.succeed<TriggerRow>({ ...stored, enabled, version: stored.version + 1, updatedAt })
    )
    return row!
  })

/**
 * Claims the announcement of one edit (the `edit` of its nudge): true for the one caller that
 * set the claim first, false for every other. Kept an hour, so a late listener claims nothing.
 */
const claimAnnouncement = (valkey: ValkeyService, edit: string): Effect.Effect<boolean, InvalidInput | ConnectionError> =>
  Effect.gen(function* () {
    const claim = yield* valkey.key("triggerAnnouncement", { edit })
    const reply = yield* command(valkey, `claim ${claim}`, (c) => c.set(claim, "1", "PX", ANNOUNCEMENT_CLAIM_MS, "NX"))
    return reply === "OK"
  })

/**
 * The triggers of the island in one hash, `dag:triggers` (field = trigger
 * id, value = the row as JSON). Tens of rows that every instance holds in memory: `list` reads
 * them all at once. Every write is a compare-and-set of the row the writer read, and publishes
 * `nudge:triggers` in the same script, so an edit reaches every instance at once: the message is
 * the edit (`TriggerEdit`: trigger, scope, change, a new edit id, whether the writer announces it
 * itself). A put validates first and stores nothing when any problem is found.
 */
export class TriggerStore extends Context.Service<TriggerStore>()("@microdcs/store/TriggerStore", {
  make: Effect.gen(function* () {
    const valkey = yield* Valkey
    const key = yield* Effect.orDie(valkey.key("triggers", {}))
    const nudgeChannel = yield* Effect.orDie(valkey.key("nudge", { kind: TRIGGER_NUDGE_KIND }))
    const deps: TriggerDeps = { valkey, key, nudgeChannel }
    return {
      list: list(deps),
      claimAnnouncement: (edit: string) => claimAnnouncement(valkey, edit),
      get: (id: string) => get(deps, id),
      put: (input: unknown, options?: TriggerWriteOptions) => put(deps, input, options),
      remove: (id: string, options?: Pick<TriggerWriteOptions, "expectedVersion" | "announced">) => remove(deps, id, options),
      enable: (id: string, options?: TriggerWriteOptions) => setEnabled(deps, id, true, options),
      disable: (id: string, options?: TriggerWriteOptions) => setEnabled(deps, id, false, options)
    } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
