import type { HeldConfigurations } from "./HeldConfigurations.js"
import type { JournalCache } from "./JournalCache.js"
import type { JournalConfigStore } from "./JournalConfigStore.js"
import type { JournalSettings } from "./JournalOptions.js"
import type { JournalStore } from "./JournalStore.js"

/** What the journal's functions share: its stores, settings, clock, local cache and held configurations. */
export interface JournalDeps {
  readonly store: JournalStore["Service"]
  readonly configStore: JournalConfigStore["Service"]
  readonly options: JournalSettings
  readonly clock: { readonly now: () => number }
  readonly cache: JournalCache
  readonly configs: HeldConfigurations
}
