import type { Config } from "effect"
import { checkedInt } from "./ConfigChecks.js"

/** Integer settings: each carries the one validation that names its variable in the error. */

export const positive = (name: string): Config.Config<number> => checkedInt(name, (n) => (n > 0 ? undefined : `${name} must be a positive integer`))

export const nonNegative = (name: string, max = Number.MAX_SAFE_INTEGER): Config.Config<number> =>
  checkedInt(name, (n) =>
    n >= 0 && n <= max ? undefined : max === Number.MAX_SAFE_INTEGER ? `${name} must be 0 or a positive integer` : `${name} must be an integer from 0 to ${max}`
  )
