import { Effect } from "effect"
import type { LogWrite } from "@microdcs/sfc"

/** The log writes of one CAS, as the core returned them, with the scope they belong to. */
export interface QueuedWrites {
  readonly scope: string
  readonly writes: ReadonlyArray<LogWrite>
}

/**
 * The bounded queue between the CAS path and the log writer's fiber: `offer` is plain code (one
 * array push per CAS, no effect, no allocation per write) and never waits; the fiber takes
 * everything queued at once, so the writes of every CAS since its last flush are one batch.
 */
export class LogWriteQueue {
  private pending: Array<QueuedWrites> = []
  private count = 0
  private wake: (() => void) | undefined

  constructor(private readonly capacity: number) {}

  /** Writes waiting. */
  get size(): number {
    return this.count
  }

  /** Queues what fits of one CAS's writes (the first ones); returns how many did not fit. */
  offer(scope: string, writes: ReadonlyArray<LogWrite>): number {
    const room = this.capacity - this.count
    if (room <= 0) return writes.length
    const taken = writes.length <= room ? writes : writes.slice(0, room)
    this.pending.push({ scope, writes: taken })
    this.count += taken.length
    const wake = this.wake
    if (wake !== undefined) {
      this.wake = undefined
      wake()
    }
    return writes.length - taken.length
  }

  /** Everything queued, oldest first; empties the queue. */
  takeAll(): ReadonlyArray<QueuedWrites> {
    const taken = this.pending
    this.pending = []
    this.count = 0
    return taken
  }

  /**
   * The oldest CASes' writes, whole, until they hold at least `maxWrites` (or everything queued):
   * a backlog is written in bounded batches, so none keeps the event loop long.
   */
  take(maxWrites: number): ReadonlyArray<QueuedWrites> {
    let n = 0
    let end = 0
    while (end < this.pending.length && n < maxWrites) n += this.pending[end++]!.writes.length
    if (end === this.pending.length) return this.takeAll()
    const taken = this.pending.slice(0, end)
    this.pending = this.pending.slice(end)
    this.count -= n
    return taken
  }

  /**
   * Waits until something is queued. The fiber resumes through the scheduler, not inside
   * `offer`: the CAS that woke it (and any other that completes meanwhile) finishes first.
   */
  readonly waitForWrites: Effect.Effect<void> = Effect.suspend(() =>
    this.count > 0
      ? Effect.void
      : Effect.callback<void>((resume) => {
          this.wake = () => resume(Effect.void)
          return Effect.sync(() => {
            this.wake = undefined
          })
        })
  )
}
