import { Effect, Option } from "effect"

/** What Store and StoreAndStart read before their put: whether the id is taken, and the scope's limit. */
export interface JobOrderAdmission {
  /** A document (of any scope) holds the id. */
  readonly exists: boolean
  /** The scope's acceptance limit (`jobacceptance:{scope}`), none when unset. */
  readonly limit: Option.Option<number>
  /**
   * Read with the claim only (`DedupeStore.claimWithAdmission` given work master ids): the ids
   * the scope's work master list does not hold, in the order asked.
   */
  readonly unknownWorkMasters?: ReadonlyArray<string> | undefined
}

/**
 * A job order's admission from what was read: `stored` is the text of `jobacceptance:{scope}`
 * (`limitKey`), null when unset. Only JobAcceptanceDao.set writes that key, so anything but an
 * integer is corruption, a defect (also for `DedupeStore.claimWithAdmission`, which reads the same).
 */
export const admissionFrom = (exists: boolean, stored: string | null, limitKey: string): Effect.Effect<JobOrderAdmission> => {
  if (stored === null) return Effect.succeed({ exists, limit: Option.none() })
  if (!/^\d+$/.test(stored)) return Effect.die(new Error(`${limitKey} holds '${stored}', not an integer limit`))
  return Effect.succeed({ exists, limit: Option.some(Number(stored)) })
}
