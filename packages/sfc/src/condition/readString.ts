import { Result } from "effect"
import { ConditionError } from "./ConditionError.js"

const simpleEscapes: ReadonlyMap<string, string> = new Map([
  ["\\", "\\"],
  ["'", "'"],
  ['"', '"'],
  ["/", "/"],
  ["b", "\b"],
  ["f", "\f"],
  ["n", "\n"],
  ["r", "\r"],
  ["t", "\t"]
])

/**
 * Reads a quoted string starting at `start` (a string literal, or a quoted name such as
 * `"verify-2"`); JSON escapes plus `\'`, so any JSON string literal reads back.
 */
export const readString = (text: string, start: number): Result.Result<{ value: string; end: number }, ConditionError> => {
  const quote = text[start]
  let value = ""
  let i = start + 1
  while (i < text.length) {
    const char = text[i]!
    if (char === quote) return Result.succeed({ value, end: i + 1 })
    if (char !== "\\") {
      value += char
      i += 1
      continue
    }
    const escape = text[i + 1]
    const simple = escape === undefined ? undefined : simpleEscapes.get(escape)
    if (simple !== undefined) {
      value += simple
      i += 2
    } else if (escape === "u" && /^[0-9A-Fa-f]{4}$/.test(text.slice(i + 2, i + 6))) {
      value += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16))
      i += 6
    } else {
      return Result.fail(new ConditionError({ message: `unknown escape sequence in string`, position: i }))
    }
  }
  return Result.fail(new ConditionError({ message: "unterminated string", position: start }))
}
