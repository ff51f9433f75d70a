import { formatDuration } from "./Duration.js"
import type { JournalConfig } from "./JournalConfig.js"

/** A journal at a glance: its configuration's names and its figures (0 when it has none yet). */
export interface JournalSummary {
  readonly scope: string
  readonly journal: string
  readonly types: ReadonlyArray<string>
  readonly searchKeys: ReadonlyArray<string>
  readonly counters: ReadonlyArray<string>
  readonly retention: string
  readonly compression: JournalConfig["compression"]
  readonly entries: number
  readonly bytes: number
}

/**
 * One journal as operators see it, the same in the admin CLI's `journal list --json` and in the
 * HTTP API's `/api/journals`.
 */
export const journalSummary = (config: JournalConfig, figures: { readonly entries: number; readonly bytes: number } | undefined): JournalSummary => ({
  scope: config.scope,
  journal: config.name,
  types: config.types,
  searchKeys: config.searchKeys.map((k) => k.name),
  counters: config.counters.map((c) => c.name),
  retention: formatDuration(config.retentionMs),
  compression: config.compression,
  entries: figures?.entries ?? 0,
  bytes: figures?.bytes ?? 0
})
