/** One entry of a batch that failed, as a batch handler reports it. */
export interface EntryFailure {
  /** The entry's stream id (`PollerEntry.id`). */
  readonly id: string
  /** Why it failed; kept as text in the dead letter (a tagged error shows as `_tag: message`). */
  readonly error: unknown
}

/**
 * What a batch handler returns: the entries that failed. Every other entry of the batch succeeded
 * and is acknowledged (one XACK for all of them); each failed one follows the per-entry rules
 * (retried alone after its backoff, dead-lettered after `maxDeliveries`). Ids that were not in the
 * batch are ignored. Returning nothing (`void`) means every entry succeeded.
 */
export interface BatchOutcome {
  readonly failures: ReadonlyArray<EntryFailure>
}

export const BatchOutcome = {
  /** Every entry succeeded. */
  allSucceeded: { failures: [] } as BatchOutcome,
  /** These entries failed; every other one of the batch succeeded. */
  failed: (failures: ReadonlyArray<EntryFailure>): BatchOutcome => ({ failures })
} as const
