import { Context, Effect, Layer } from "effect"
import { InvalidInput } from "@microdcs/store"
import { MAX_PAGE_SIZE } from "./Command.js"
import type { RecipePins } from "./RecipeDigests.js"

export interface JobControlSettings {
  /** The acceptance limit of a scope without `jobacceptance:{scope}`; 0 = unlimited. */
  readonly defaultAcceptanceLimit: number
  /** How long a cancelled or cleared job order stays readable, in ms (default 7 days). */
  readonly retentionMs: number
  /** Re-reads after a version conflict before a transition gives up with StateMoved. */
  readonly maxAttempts: number
  /** Job responses per state query page when the request names no PageSize. */
  readonly statePageSize: number
  /** Pinned recipe digests (`RECIPE_DIGESTS`): a work master whose recipe has another digest is refused when stored. */
  readonly recipeDigests: RecipePins
}

export const defaultJobControlSettings: JobControlSettings = {
  defaultAcceptanceLimit: 0,
  retentionMs: 7 * 24 * 60 * 60 * 1000,
  maxAttempts: 10,
  statePageSize: 100,
  recipeDigests: new Map()
}

const checks: ReadonlyArray<readonly [Exclude<keyof JobControlSettings, "recipeDigests">, number, number]> = [
  ["defaultAcceptanceLimit", 0, Number.MAX_SAFE_INTEGER],
  ["retentionMs", 1, Number.MAX_SAFE_INTEGER],
  ["maxAttempts", 1, 1000],
  ["statePageSize", 1, MAX_PAGE_SIZE]
]

/** The settings, checked once when the layer is built: a bad value names its field. */
export const validateSettings = (partial: Partial<JobControlSettings>): Effect.Effect<JobControlSettings, InvalidInput> =>
  Effect.suspend(() => {
    const settings = { ...defaultJobControlSettings, ...partial }
    for (const [field, min, max] of checks) {
      const value = settings[field]
      if (!Number.isSafeInteger(value) || value < min || value > max) {
        return Effect.fail(new InvalidInput({ field, message: `${field} must be an integer from ${min} to ${max}, got ${value}` }))
      }
    }
    for (const [id, digest] of settings.recipeDigests) {
      if (!/^[0-9a-f]{64}$/.test(digest)) {
        return Effect.fail(new InvalidInput({ field: "recipeDigests", message: `the pinned digest of ${id} is not a SHA-256 digest (64 lower-case hex characters)` }))
      }
    }
    return Effect.succeed(settings)
  })

/** The job-control processor's settings, a service so the daemon sets them from its configuration. */
export class JobControlOptions extends Context.Service<JobControlOptions, JobControlSettings>()("@microdcs/job-control/JobControlOptions") {
  static readonly layer = (settings: Partial<JobControlSettings> = {}): Layer.Layer<JobControlOptions, InvalidInput> =>
    Layer.effect(JobControlOptions, validateSettings(settings))

  static readonly Default: Layer.Layer<JobControlOptions> = Layer.succeed(JobControlOptions, defaultJobControlSettings)
}
