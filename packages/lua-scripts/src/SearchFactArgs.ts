/**
 * What the search index keeps of a job order document (see `lib/joborder-search.lua`): its state
 * text (the main state's, then `_` and the substate's), its first work master id, and for an
 * Aborted one its comment cut to 500 bytes on a UTF-8 boundary; `""` for what the document lacks.
 * A write given them does not decode the document for them.
 */
export interface JobOrderSearchFacts {
  readonly state: string
  readonly workMaster: string
  readonly error: string
}

/** The search facts as the write scripts' last three arguments (none: the script reads them from the doc). */
export const searchFactArgs = (facts: JobOrderSearchFacts | undefined): ReadonlyArray<string> =>
  facts === undefined ? [] : [facts.state, facts.workMaster, facts.error]
