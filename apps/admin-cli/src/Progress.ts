import { Effect } from "effect"
import type { IndexPhase, RebuildProgress } from "@microdcs/store"

/**
 * The progress bar of `index rebuild`, on stderr so stdout stays the result. The rebuild walks
 * one phase per registered family (the six core ones, then an extension's); how many keys each
 * holds is unknown until it is scanned (DBSIZE counts every prefix), so the bar shows phases
 * done, and the running counts show the work within one.
 */
const corePhases: ReadonlyArray<IndexPhase> = ["scopes", "joborder", "joborder-search", "jobresponse", "jobresponse-failed", "workmaster", "references"]

const BAR_WIDTH = 20

export const progressLine = (progress: RebuildProgress, phases: ReadonlyArray<IndexPhase> = corePhases): string => {
  const at = Math.max(0, phases.indexOf(progress.phase))
  const filled = Math.round(((at + 0.5) / phases.length) * BAR_WIDTH)
  const bar = "#".repeat(filled) + "-".repeat(BAR_WIDTH - filled)
  return `[${bar}] ${at + 1}/${phases.length} ${progress.phase.padEnd(11)} scanned ${progress.scanned}, repaired ${progress.repaired}, removed ${progress.removed}`
}

export interface ProgressBar {
  readonly update: (progress: RebuildProgress) => Effect.Effect<void>
  readonly done: Effect.Effect<void>
}

/**
 * On a terminal the line is redrawn in place and erased at the end. Elsewhere (a log file, a CI job) redrawing would
 * fill the log with carriage returns, so one line is written per phase instead.
 */
export const progressBar = (stream: NodeJS.WriteStream = process.stderr, phases: ReadonlyArray<IndexPhase> = corePhases): ProgressBar => {
  let lastPhase: IndexPhase | undefined
  let last: RebuildProgress | undefined
  const update = (progress: RebuildProgress) =>
    Effect.sync(() => {
      if (stream.isTTY) stream.write(`\r\x1b[2K${progressLine(progress, phases)}`)
      else if (progress.phase !== lastPhase && last !== undefined) stream.write(`${progressLine(last, phases)}\n`)
      lastPhase = progress.phase
      last = progress
    })
  // On a terminal the bar is erased once the work is done: the result that follows is what stays.
  const done = Effect.sync(() => {
    if (last === undefined) return
    stream.write(stream.isTTY ? "\r\x1b[2K" : `${progressLine(last, phases)}\n`)
  })
  return { update, done }
}
