import { Effect } from "effect"
import { Gauge } from "prom-client"
import type { Journal } from "@microdcs/journal"
import type { Metrics } from "./Metrics.js"

const NAME = "microdcs_journal_unreadable"

/** Where the gauge reads at a scrape: the journal of the island that runs now (none while it starts or stops). */
let source: Journal["Service"] | undefined

/**
 * `microdcs_journal_unreadable{scope}`: journal configurations stored in the scope that this
 * instance cannot read, so it journals nothing into them. Read from the journal at every scrape,
 * for as long as the scope lives; 0 everywhere is the healthy value (an alert's `> 0`).
 */
export const exportUnreadableJournals = (metrics: Metrics, journal: Journal["Service"]) =>
  Effect.gen(function* () {
    if (metrics.registry.getSingleMetric(NAME) === undefined) {
      new Gauge({
        name: NAME,
        help: "Journal configurations stored in the scope that this instance cannot read (nothing is journaled into them until they are fixed)",
        labelNames: ["scope"] as const,
        registers: [metrics.registry],
        collect() {
          this.reset()
          const unreadable = source === undefined ? [] : Effect.runSync(source.unreadable())
          for (const config of unreadable) this.inc({ scope: config.scope })
        }
      })
    }
    yield* Effect.acquireRelease(
      Effect.sync(() => void (source = journal)),
      () => Effect.sync(() => void (source = undefined))
    )
  })
