import { Context, Layer } from "effect"

/**
 * The journal's clock (epoch ms): reference times of arrivals, counter windows, retention, LRU
 * stamps. Counter expiry takes the time from here as a script argument, so a test moves the
 * clock instead of sleeping.
 */
export class JournalClock extends Context.Reference<{ readonly now: () => number }>("@microdcs/journal/JournalClock", {
  defaultValue: () => ({ now: () => Date.now() })
}) {
  /** A clock that reads `now` (a test's movable time). A reference's layer provides no service identifier: `Layer<never>`. */
  static fixed(now: () => number): Layer.Layer<never> {
    return Layer.succeed(JournalClock, { now })
  }
}
