import { Exit } from "effect"
import { StateMoved } from "@microdcs/store"
import type { EngineOutput, StepAllOutput } from "@microdcs/sfc"
import type { PendingInput } from "./ApplyInbox.js"
import type { Applied, ExecutionError } from "./ApplyOutcome.js"

/** How often a job's inputs go back for a fresh read after another instance moved the job. */
export const MAX_CAS_ATTEMPTS = 20

/** What a tick does with its inputs: answer them, or give them back for the next tick. */
export interface TickAnswers {
  readonly answer: (item: PendingInput, outcome: Exit.Exit<Applied, ExecutionError>) => void
  readonly retry: (items: ReadonlyArray<PendingInput>, fresh: boolean) => void
  /** The tick's write landed for these jobs: the loop may start the next tick, and take them in it. */
  readonly written: (jobIds: Iterable<string>) => void
}

/**
 * Answers each input once; inputs given back are returned to the inbox by the loop. An input
 * that keeps losing to other writers fails with `StateMoved` instead of going back again.
 */
export const tickAnswers = (giveBack: (items: ReadonlyArray<PendingInput>) => void, written: (jobIds: Iterable<string>) => void): TickAnswers => {
  const answer = (item: PendingInput, outcome: Exit.Exit<Applied, ExecutionError>) => {
    if (item.answered) return
    item.answered = true
    item.resume(outcome)
  }
  const retry = (items: ReadonlyArray<PendingInput>, fresh: boolean) => {
    const again: Array<PendingInput> = []
    for (const item of items) {
      if (item.attempt >= MAX_CAS_ATTEMPTS) {
        answer(item, Exit.fail(new StateMoved({ key: item.jobId, attempts: MAX_CAS_ATTEMPTS })))
        continue
      }
      item.attempt += 1
      item.fresh ||= fresh
      again.push(item)
    }
    giveBack(again)
  }
  return { answer, retry, written }
}

/** The output one input of a job's write answers with: the write's state, the input's own entries and note. */
export const outputOf = (result: StepAllOutput, at: number): EngineOutput => {
  const own = result.perInput[at]!
  const { note: _note, ...shared } = result.output
  return { ...shared, changed: own.changed, outbox: own.outbox, ...(own.note !== undefined ? { note: own.note } : {}) }
}

/** Answers every input of a job whose write landed (or that changed nothing, from a fresh read). */
export const answerAll = (answers: TickAnswers, items: ReadonlyArray<PendingInput>, result: StepAllOutput, version: number | undefined) =>
  items.forEach((item, at) => {
    const output = outputOf(result, at)
    answers.answer(
      item,
      Exit.succeed<Applied>(version !== undefined && output.changed ? { _tag: "Written", output, version } : { _tag: "Unchanged", output })
    )
  })
