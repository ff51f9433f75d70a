import { Result } from "effect"
import { ConditionError } from "./ConditionError.js"

export type Punctuation = "!" | "&&" | "||" | "==" | "!=" | "<" | "<=" | ">" | ">=" | "(" | ")" | "."

export type Token =
  | { readonly kind: "identifier"; readonly text: string; readonly position: number }
  | { readonly kind: "number"; readonly value: number; readonly position: number }
  | { readonly kind: "string"; readonly value: string; readonly position: number }
  | { readonly kind: "punctuation"; readonly text: Punctuation; readonly position: number }
  /** `counter.<name>`: read as one token because counter names may hold `.` and `-`. */
  | { readonly kind: "counter"; readonly name: string; readonly position: number }
  | { readonly kind: "end"; readonly position: number }

// Longest first, so `<=` is not read as `<` followed by `=`.
const punctuation: ReadonlyArray<Punctuation> = ["&&", "||", "==", "!=", "<=", ">=", "!", "<", ">", "(", ")", "."]

const identifier = /[A-Za-z_][A-Za-z0-9_]*/y
// A leading `-` belongs to the literal: there is no arithmetic, so `x > -1` needs no unary minus.
const number = /-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y
const whitespace = /[ \t\r\n]+/y
// The characters of a journal counter name; whether the name is well formed is the recipe
// validation's to say (`isCounterName`), so a condition with a bad name still parses and is listed.
const counterName = /[A-Za-z0-9_.-]*/y

/** The word that starts a counter reference. */
export const COUNTER_PREFIX = "counter"

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

const match = (pattern: RegExp, text: string, position: number): string | undefined => {
  pattern.lastIndex = position
  return pattern.exec(text)?.[0]
}

/** Hints for the characters people reach for from other languages. */
const unexpected = (text: string, position: number): ConditionError => {
  const char = text[position]!
  const hint = char === "=" ? " (use '==')" : char === "&" ? " (use '&&')" : char === "|" ? " (use '||')" : ""
  return new ConditionError({ message: `unexpected character ${JSON.stringify(char)}${hint}`, position })
}

/** Reads a quoted string starting at `start`; JSON escapes plus `\'`, so any JSON string literal reads back. */
const readString = (text: string, start: number): Result.Result<{ value: string; end: number }, ConditionError> => {
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

/** Splits a condition into tokens; the last token is always `end`. */
export const tokenize = (text: string): Result.Result<ReadonlyArray<Token>, ConditionError> => {
  const tokens: Array<Token> = []
  let position = 0
  while (position < text.length) {
    const space = match(whitespace, text, position)
    if (space !== undefined) {
      position += space.length
      continue
    }
    const char = text[position]!
    if (char === '"' || char === "'") {
      const read = readString(text, position)
      if (Result.isFailure(read)) return Result.fail(read.failure)
      tokens.push({ kind: "string", value: read.success.value, position })
      position = read.success.end
      continue
    }
    const digits = match(number, text, position)
    if (digits !== undefined) {
      const value = Number(digits)
      if (!Number.isFinite(value)) return Result.fail(new ConditionError({ message: "number out of range", position }))
      tokens.push({ kind: "number", value, position })
      position += digits.length
      continue
    }
    const word = match(identifier, text, position)
    if (word === COUNTER_PREFIX && text[position + word.length] === ".") {
      const counter = match(counterName, text, position + word.length + 1) ?? ""
      if (counter === "") {
        return Result.fail(new ConditionError({ message: "expected a counter name right after 'counter.'", position: position + word.length + 1 }))
      }
      tokens.push({ kind: "counter", name: counter, position })
      position += word.length + 1 + counter.length
      continue
    }
    if (word !== undefined) {
      tokens.push({ kind: "identifier", text: word, position })
      position += word.length
      continue
    }
    const symbol = punctuation.find((p) => text.startsWith(p, position))
    if (symbol === undefined) return Result.fail(unexpected(text, position))
    tokens.push({ kind: "punctuation", text: symbol, position })
    position += symbol.length
  }
  tokens.push({ kind: "end", position: text.length })
  return Result.succeed(tokens)
}
