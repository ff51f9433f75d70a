import type { Answer } from "./CommandAnswers.js"

/** What a station did so far. */
export interface StationStats {
  /** Commands received (a redelivered one again). */
  readonly commands: number
  /** Of those: answered with data, with an error, not at all, and matched by no rule. */
  readonly replies: number
  readonly errors: number
  readonly silences: number
  readonly unscripted: number
  /** Events sent (each id once), and the further copies of resent ones. */
  readonly events: number
  readonly copies: number
  /** Commands received, by CloudEvent type. */
  readonly commandsByType: Readonly<Record<string, number>>
}

export interface StationStatsCounter {
  readonly answered: (type: string, answer: Answer) => void
  readonly sent: (copy: number) => void
  readonly snapshot: () => StationStats
}

export const makeStationStats = (): StationStatsCounter => {
  const counts = { commands: 0, replies: 0, errors: 0, silences: 0, unscripted: 0, events: 0, copies: 0 }
  const byType: Record<string, number> = {}
  return {
    answered: (type, answer) => {
      counts.commands++
      byType[type] = (byType[type] ?? 0) + 1
      if (answer.rule === undefined) counts.unscripted++
      if (answer._tag === "Silent") counts.silences++
      else if (answer.error !== undefined) counts.errors++
      else counts.replies++
    },
    sent: (copy) => void (copy === 1 ? counts.events++ : counts.copies++),
    snapshot: () => ({ ...counts, commandsByType: { ...byType } })
  }
}
