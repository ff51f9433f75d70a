import { Config } from "effect"

/** Integer settings: each carries the one validation that names its variable in the error. */

// One validation per variable: a second one chained after it reports no variable name.
export const positive = (name: string) =>
  Config.Int(name).pipe(Config.validate({ message: `${name} must be a positive integer`, validation: (n) => n > 0 }))

export const nonNegative = (name: string, max = Number.MAX_SAFE_INTEGER) =>
  Config.Int(name).pipe(
    Config.validate({
      message: max === Number.MAX_SAFE_INTEGER ? `${name} must be 0 or a positive integer` : `${name} must be an integer from 0 to ${max}`,
      validation: (n) => n >= 0 && n <= max
    })
  )
