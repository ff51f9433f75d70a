import { ConfigEventTypes } from "@microdcs/job-control"
import { MethodEventTypes, QueryEventTypes } from "@microdcs/job-state"
import { JOURNAL_CONFIG_EVENT_TYPE } from "@microdcs/journal"

/**
 * Label values that come from the network (a CloudEvent's type) are bounded: every distinct
 * value is a time series of its own, and a client sending random types must not grow the
 * registry without end.
 */

/** Label value for anything outside the known or first-seen set. */
export const OTHER = "other"

/** Every CloudEvent type the job control ingress serves: methods, queries, station and journal configuration. */
export const jobControlTypes: ReadonlySet<string> = new Set([
  ...Object.values(MethodEventTypes),
  ...Object.values(QueryEventTypes),
  ...Object.values(ConfigEventTypes),
  JOURNAL_CONFIG_EVENT_TYPE
])

const labelShape = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/

/**
 * A label of `known` values (others are `other`), or, without a known set, of the first `cap`
 * distinct values of a sane shape (for station event types, which the recipes name).
 */
export const boundedLabel = (options: { readonly known?: ReadonlySet<string>; readonly cap?: number; readonly keep?: ReadonlyArray<string> }) => {
  const seen = new Set<string>(options.keep ?? [])
  const cap = (options.cap ?? 32) + seen.size
  return (value: string): string => {
    if (seen.has(value)) return value
    if (options.known !== undefined) return options.known.has(value) ? value : OTHER
    if (!labelShape.test(value) || seen.size >= cap) return OTHER
    seen.add(value)
    return value
  }
}
