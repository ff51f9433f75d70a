import type { RetryPolicy } from "../recipe/Recipe.js"

/** A retry policy's defaults, as a workflow engine's retry policy has them. */
export const DEFAULT_INITIAL_INTERVAL_SECONDS = 1
export const DEFAULT_BACKOFF_COEFFICIENT = 2
/** Without `MaximumIntervalSeconds` the wait stops growing at this many initial intervals. */
export const DEFAULT_MAXIMUM_INTERVAL_FACTOR = 100

/**
 * The wait (ms) after attempt `failed` (1 = the first) failed, before the next one is sent:
 * the initial interval times the coefficient once per earlier failure, capped by the maximum.
 */
export const backoffMs = (retry: RetryPolicy, failed: number): number => {
  const initial = retry.InitialIntervalSeconds ?? DEFAULT_INITIAL_INTERVAL_SECONDS
  const maximum = retry.MaximumIntervalSeconds ?? initial * DEFAULT_MAXIMUM_INTERVAL_FACTOR
  const seconds = Math.min(initial * (retry.BackoffCoefficient ?? DEFAULT_BACKOFF_COEFFICIENT) ** (failed - 1), maximum)
  return Math.round(seconds * 1000)
}
