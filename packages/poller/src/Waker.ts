import { Effect } from "effect"

/** setTimeout's longest delay; a later deadline wakes the worker early, for a round that finds nothing due. */
const MAX_TIMER_MS = 2 ** 31 - 1

/** How a scope worker sleeps between rounds, and how plain code wakes it. */
export interface Waker {
  /** Ends the current sleep at once; when the worker is not sleeping, the next sleep returns at once (wakes do not pile up). */
  readonly wake: () => void
  /** Sleeps until `wake` or `ms` have passed, whichever comes first. */
  readonly sleep: (ms: number) => Effect.Effect<void>
}

/**
 * A worker's wake-up as one `Effect.callback` and one timer per sleep, woken from plain code (the
 * nudge listener's event, the fallback round, shutdown). It replaces a sliding queue raced with a
 * sleep and with the shutdown signal: four fibers, two interruptions and a queue taker per round
 * were most of what a nudged round cost. The timer is a plain one, on real time, like the server's
 * idle times the deadlines are measured against.
 */
export const makeWaker = (): Waker => {
  let woken = false
  let resume: ((done: Effect.Effect<void>) => void) | undefined
  let timer: ReturnType<typeof setTimeout> | undefined

  const stop = () => {
    if (timer !== undefined) clearTimeout(timer)
    timer = undefined
    resume = undefined
  }
  const fire = () => {
    const r = resume
    stop()
    r?.(Effect.void)
  }

  return {
    wake: () => {
      if (resume) fire()
      else woken = true
    },
    sleep: (ms) =>
      Effect.callback<void>((done) => {
        if (woken) {
          woken = false
          done(Effect.void)
          return
        }
        resume = done
        timer = setTimeout(fire, Math.min(Math.max(0, ms), MAX_TIMER_MS))
        // Interrupted (the worker stops past the shutdown grace): nothing may fire any more.
        return Effect.sync(stop)
      })
  }
}
