import { Context, Layer } from "effect"
import type { ConditionLanguage } from "./JournalConfig.js"

export interface JournalSettings {
  /** The local cache's bound in bytes (0: no cache). Default 32 MiB. */
  readonly cacheBytes: number
  /** Index keys warming reads per journal from its LRU, at most. Default 1000. */
  readonly warmIndexKeys: number
  /** Entries warming reads per index key, newest first. Default 100. */
  readonly warmEntriesPerKey: number
  /** The language of counters' `when`; without one a `when` is refused. */
  readonly conditions?: ConditionLanguage | undefined
}

/** The journal's settings; `JournalOptions.layer({ cacheBytes })` overrides the defaults. */
export class JournalOptions extends Context.Reference<JournalSettings>("@microdcs/journal/JournalOptions", {
  defaultValue: () => ({ cacheBytes: 32 * 1024 * 1024, warmIndexKeys: 1000, warmEntriesPerKey: 100 })
}) {
  static layer(settings: Partial<JournalSettings>): Layer.Layer<never> {
    return Layer.succeed(JournalOptions, { cacheBytes: 32 * 1024 * 1024, warmIndexKeys: 1000, warmEntriesPerKey: 100, ...settings })
  }
}
