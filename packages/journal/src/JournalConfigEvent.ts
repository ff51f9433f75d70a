import { Effect } from "effect"
import type { ConnectionError, InvalidInput, WrongType } from "@microdcs/store"
import { Journal } from "./Journal.js"
import type { JournalConfig } from "./JournalConfig.js"
import { JournalConfigInvalid, type JournalNotFound } from "./JournalErrors.js"

/**
 * The journal's configuration event, in the family of the station configuration
 * events (`...config.{kind}.v1`): the scope is the `subject`, the extension `method` is `PUT`
 * (default) or `DELETE`. PUT carries the journal's configuration as `data` (see
 * `parseJournalConfig`); DELETE names it in `data.name`. The daemon registers
 * `handleJournalConfigEvent` beside its other configuration handlers.
 */
export const JOURNAL_CONFIG_EVENT_TYPE = "com.github.aschamberger.ISA95-JOBCONTROL_V2.config.journal.v1" as const

export interface JournalConfigEvent {
  readonly type: string
  readonly subject?: string | undefined
  readonly data?: unknown
  /** CloudEvent extension attributes; `method` is PUT or DELETE. */
  readonly extensions?: Readonly<Record<string, string>> | undefined
}

export type JournalConfigOutcome =
  | { readonly _tag: "JournalConfigured"; readonly config: JournalConfig; readonly created: boolean }
  | { readonly _tag: "JournalRemoved"; readonly scope: string; readonly journal: string }

export const isJournalConfigEvent = (event: { readonly type: string }): boolean => event.type === JOURNAL_CONFIG_EVENT_TYPE

/** Applies one configuration event; a bad one is `JournalConfigInvalid` with every problem, and nothing is stored. */
export const handleJournalConfigEvent = (
  event: JournalConfigEvent
): Effect.Effect<JournalConfigOutcome, JournalConfigInvalid | JournalNotFound | InvalidInput | WrongType | ConnectionError, Journal> =>
  Effect.gen(function* () {
    const journal = yield* Journal
    const scope = event.subject ?? ""
    const method = (event.extensions?.["method"] ?? "PUT").toUpperCase()
    const problems: Array<string> = []
    if (event.type !== JOURNAL_CONFIG_EVENT_TYPE) problems.push(`type must be ${JOURNAL_CONFIG_EVENT_TYPE}, got ${event.type}`)
    if (scope === "") problems.push("subject must name the scope")
    if (method !== "PUT" && method !== "DELETE") problems.push(`method must be PUT or DELETE, got '${event.extensions?.["method"]}'`)
    if (method === "DELETE") {
      const name = (event.data as { readonly name?: unknown } | null | undefined)?.name
      if (typeof name !== "string" || name === "") problems.push("a DELETE names the journal in data.name")
      if (problems.length > 0) return yield* new JournalConfigInvalid({ scope, journal: undefined, problems })
      yield* journal.remove(scope, name as string)
      return { _tag: "JournalRemoved", scope, journal: name as string } as const
    }
    if (problems.length > 0) return yield* new JournalConfigInvalid({ scope, journal: undefined, problems })
    const { config, created } = yield* journal.configure(scope, event.data)
    return { _tag: "JournalConfigured", config, created } as const
  })
