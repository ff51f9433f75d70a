/** Milliseconds on a clock every process on the machine shares (child processes report in it too). */
export const wallClock = (): number => performance.timeOrigin + performance.now()

/** One step of one job: when its work began and when it was done. */
export type StepTime = readonly [job: string, step: number, startedAt: number, endedAt: number]

/**
 * When each step of each job ran. The gap from step k-1 being done to step k starting is the
 * "event to next dispatch" of the engine and the step gap of BullMQ.
 */
export class StepLog {
  readonly times: Array<StepTime> = []

  record(job: string, step: number, startedAt: number, endedAt: number = startedAt): void {
    this.times.push([job, step, startedAt, endedAt])
  }

  /** Gaps in ms, over every job's consecutive steps (the first step of a job has none). */
  static gaps(times: ReadonlyArray<StepTime>): Array<number> {
    const byJob = new Map<string, Map<number, StepTime>>()
    for (const time of times) {
      const steps = byJob.get(time[0]) ?? new Map<number, StepTime>()
      steps.set(time[1], time)
      byJob.set(time[0], steps)
    }
    const gaps: Array<number> = []
    for (const steps of byJob.values()) {
      for (const [step, [, , startedAt]] of steps) {
        const previous = steps.get(step - 1)
        if (previous) gaps.push(startedAt - previous[3])
      }
    }
    return gaps
  }
}
