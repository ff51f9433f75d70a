import { Effect, Context, Layer } from "effect"
import { checkKeyPart } from "@microdcs/keyschema"
import { type ConnectionError, InvalidInput, typedCommand, Valkey, type ValkeyService, type WrongType, wrongTypeError } from "@microdcs/store"
import { type ConditionLanguage, type JournalConfig, journalConfigJson, parseJournalConfig, scopeProblems } from "./JournalConfig.js"
import { JournalConfigInvalid, JournalNotFound } from "./JournalErrors.js"
import { type JournalKeySchema, journalKeysOf } from "./JournalKeys.js"
import { journalConfigDelete, journalConfigPut } from "./JournalScripts.js"

/** A stored configuration that no longer reads back (written by another version, edited by hand). */
export interface UnreadableConfig {
  readonly scope: string
  readonly journal: string
  readonly problems: ReadonlyArray<string>
}

/** What the configuration store's functions share. */
interface ConfigStoreDeps {
  readonly valkey: ValkeyService
  readonly keys: JournalKeySchema
  readonly scopesKey: string
  readonly nudgeChannel: string
}

const configKey = (deps: ConfigStoreDeps, scope: string): Effect.Effect<string, InvalidInput> => {
  const key = deps.keys.key("journalConfig", { scope })
  return typeof key === "string" ? Effect.succeed(key) : Effect.fail(new InvalidInput({ field: "scope", message: key.message }))
}

/** One stored configuration read back, or why it does not. */
const readOne = (scope: string, journal: string, text: string, conditions: ConditionLanguage | undefined): { readonly config: JournalConfig } | UnreadableConfig => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return { scope, journal, problems: ["not JSON"] }
  }
  const parsed = parseJournalConfig(scope, json, conditions)
  return "config" in parsed ? parsed : { scope, journal, problems: parsed.problems }
}

/** Every stored configuration of a scope, and those that do not read back. */
const read = (
  deps: ConfigStoreDeps,
  scope: string,
  conditions?: ConditionLanguage
): Effect.Effect<{ readonly configs: ReadonlyArray<JournalConfig>; readonly unreadable: ReadonlyArray<UnreadableConfig> }, InvalidInput | WrongType | ConnectionError> =>
  Effect.gen(function* () {
    const key = yield* configKey(deps, scope)
    const stored = yield* typedCommand(deps.valkey, "journal configs", key, "hash", (c) => c.hgetall(key))
    const configs: Array<JournalConfig> = []
    const unreadable: Array<UnreadableConfig> = []
    for (const [journal, text] of Object.entries(stored).sort(([a], [b]) => a.localeCompare(b))) {
      const one = readOne(scope, journal, text, conditions)
      if ("config" in one) configs.push(one.config)
      else unreadable.push(one)
    }
    return { configs, unreadable }
  })

const scopes = (deps: ConfigStoreDeps): Effect.Effect<ReadonlyArray<string>, WrongType | ConnectionError> =>
  typedCommand(deps.valkey, "journal scopes", deps.scopesKey, "set", (c) => c.smembers(deps.scopesKey)).pipe(
    Effect.map((members) => [...members].sort())
  )

/**
 * Validates and stores one journal's configuration (JSON form, see `parseJournalConfig`).
 * Refused with every problem (`JournalConfigInvalid`) and nothing stored when it is invalid
 * or one of its counter names is another journal's in the scope.
 */
const put = (
  deps: ConfigStoreDeps,
  scope: string,
  input: unknown,
  conditions?: ConditionLanguage
): Effect.Effect<{ readonly config: JournalConfig; readonly created: boolean }, JournalConfigInvalid | InvalidInput | WrongType | ConnectionError> =>
  Effect.gen(function* () {
    const journal = typeof input === "object" && input !== null && typeof (input as { name?: unknown }).name === "string" ? (input as { name: string }).name : undefined
    const parsed = parseJournalConfig(scope, input, conditions)
    if ("problems" in parsed) return yield* new JournalConfigInvalid({ scope, journal, problems: parsed.problems })
    // Read with the same language: a journal whose `when` it compiles must not count as unreadable.
    const { configs } = yield* read(deps, scope, conditions)
    const clashes = scopeProblems(parsed.config, configs)
    if (clashes.length > 0) return yield* new JournalConfigInvalid({ scope, journal, problems: clashes })
    const reply = yield* deps.valkey.script(
      journalConfigPut,
      { config: yield* configKey(deps, scope), scopes: deps.scopesKey },
      { scope, journal: parsed.config.name, json: JSON.stringify(journalConfigJson(parsed.config)), nudgeChannel: deps.nudgeChannel }
    )
    return reply.status === "ok" ? { config: parsed.config, created: reply.created } : yield* wrongTypeError(reply)
  })

const remove = (deps: ConfigStoreDeps, scope: string, journal: string): Effect.Effect<void, JournalNotFound | InvalidInput | WrongType | ConnectionError> =>
  Effect.gen(function* () {
    const bad = checkKeyPart("journal", journal)
    if (bad) return yield* new InvalidInput({ field: "journal", message: bad.message })
    const reply = yield* deps.valkey.script(journalConfigDelete, { config: yield* configKey(deps, scope), scopes: deps.scopesKey }, { scope, journal, nudgeChannel: deps.nudgeChannel })
    if (reply.status === "notfound") return yield* new JournalNotFound({ scope, journal })
    if (reply.status === "wrongtype") return yield* wrongTypeError(reply)
  })

/**
 * Where journal configurations live: `journal:config:{scope}` (journal → JSON) and the
 * `journal:scopes` registry. A put validates first (every problem listed, nothing stored on
 * any), then one script stores it and nudges `nudge:journal` with the scope, so every process
 * holding the configuration in memory reloads that scope.
 */
export class JournalConfigStore extends Context.Service<JournalConfigStore>()("@microdcs/journal/JournalConfigStore", {
  make: Effect.gen(function* () {
    const valkey = yield* Valkey
    const keys = yield* journalKeysOf(valkey)
    const scopesKey = keys.key("journalScopes", {}) as string
    const nudgeChannel = yield* valkey.key("nudge", { kind: "journal" }).pipe(Effect.orDie)
    const deps: ConfigStoreDeps = { valkey, keys, scopesKey, nudgeChannel }
    return {
      read: (scope: string, conditions?: ConditionLanguage) => read(deps, scope, conditions),
      scopes: scopes(deps),
      put: (scope: string, input: unknown, conditions?: ConditionLanguage) => put(deps, scope, input, conditions),
      remove: (scope: string, journal: string) => remove(deps, scope, journal)
    } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
