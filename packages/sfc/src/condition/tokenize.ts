import { Result } from "effect"
import { ConditionError } from "./ConditionError.js"
import { readString } from "./readString.js"

export type Punctuation = "!" | "&&" | "||" | "==" | "!=" | "<" | "<=" | ">" | ">=" | "(" | ")" | "." | "+" | "-" | "*" | "/"

export type Token =
  | { readonly kind: "identifier"; readonly text: string; readonly position: number }
  /** Digits right after a `.`: a path segment (`order.JobOrderParameters.0`), never a number. */
  | { readonly kind: "index"; readonly text: string; readonly position: number }
  /** `duration`: written with a unit (`5s`); `value` is then in milliseconds. */
  | { readonly kind: "number"; readonly value: number; readonly text: string; readonly duration: boolean; readonly position: number }
  | { readonly kind: "string"; readonly value: string; readonly position: number }
  | { readonly kind: "punctuation"; readonly text: Punctuation; readonly position: number }
  /** `counter.<name>` (or `counter."<name>"`): one token because counter names may hold `.` and `-`. */
  | { readonly kind: "counter"; readonly name: string; readonly quoted: boolean; readonly position: number }
  | { readonly kind: "end"; readonly position: number }

// Longest first, so `<=` is not read as `<` followed by `=`.
const punctuation: ReadonlyArray<Punctuation> = ["&&", "||", "==", "!=", "<=", ">=", "!", "<", ">", "(", ")", ".", "+", "-", "*", "/"]

const identifier = /[A-Za-z_][A-Za-z0-9_]*/y
// No sign: `-` is an operator, and the parser folds `-1` into a negative literal.
const number = /[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y
const digits = /[0-9]+/y
const whitespace = /[ \t\r\n]+/y
// The characters of a journal counter name; whether the name is well formed is the recipe
// validation's to say (`isCounterName`), so a condition with a bad name still parses and is listed.
const counterName = /[A-Za-z0-9_.-]*/y

/** The word that starts a counter reference. */
export const COUNTER_PREFIX = "counter"

/** Duration units and their length in milliseconds: `250ms`, `5s`, `2min`, `1h`. */
export const durationUnits: ReadonlyMap<string, number> = new Map([
  ["ms", 1],
  ["s", 1000],
  ["min", 60_000],
  ["h", 3_600_000]
])

const match = (pattern: RegExp, text: string, position: number): string | undefined => {
  pattern.lastIndex = position
  return pattern.exec(text)?.[0]
}

type Read = Result.Result<{ readonly token: Token; readonly end: number }, ConditionError>
const read = (token: Token, end: number): Read => Result.succeed({ token, end })
const problem = (message: string, position: number): Read => Result.fail(new ConditionError({ message, position }))

/** Hints for the characters people reach for from other languages. */
const unexpected = (text: string, position: number): Read => {
  const char = text[position]!
  const hint = char === "=" ? " (use '==')" : char === "&" ? " (use '&&')" : char === "|" ? " (use '||')" : ""
  return problem(`unexpected character ${JSON.stringify(char)}${hint}`, position)
}

/** A number, with a duration unit right after it when one follows (`5s`; `5 s` is a number and a name). */
const readNumber = (text: string, position: number, literal: string): Read => {
  const value = Number(literal)
  if (!Number.isFinite(value)) return problem("number out of range", position)
  const unitAt = position + literal.length
  const unit = match(identifier, text, unitAt)
  if (unit === undefined) return read({ kind: "number", value, text: literal, duration: false, position }, unitAt)
  const scale = durationUnits.get(unit)
  if (scale === undefined) return problem(`unknown duration unit '${unit}' (use ${[...durationUnits.keys()].join(", ")})`, unitAt)
  const ms = value * scale
  if (!Number.isFinite(ms)) return problem("duration out of range", position)
  return read({ kind: "number", value: ms, text: literal + unit, duration: true, position }, unitAt + unit.length)
}

/** `counter.` then a journal name, or a quoted one (`counter."nok 1h"`). */
const readCounter = (text: string, position: number): Read => {
  const nameAt = position + COUNTER_PREFIX.length + 1
  if (text[nameAt] === '"' || text[nameAt] === "'") {
    return Result.map(readString(text, nameAt), ({ value, end }) => ({ token: { kind: "counter", name: value, quoted: true, position } as Token, end }))
  }
  const name = match(counterName, text, nameAt) ?? ""
  if (name === "") return problem("expected a counter name right after 'counter.'", nameAt)
  return read({ kind: "counter", name, quoted: false, position }, nameAt + name.length)
}

/** Right after a `.`: a word or digits (a path segment); a quoted name reads as usual. */
const readSegment = (text: string, position: number): Read | undefined => {
  const word = match(identifier, text, position)
  if (word !== undefined) return read({ kind: "identifier", text: word, position }, position + word.length)
  const index = match(digits, text, position)
  return index === undefined ? undefined : read({ kind: "index", text: index, position }, position + index.length)
}

const readToken = (text: string, position: number, afterDot: boolean): Read => {
  const char = text[position]!
  if (char === '"' || char === "'") {
    return Result.map(readString(text, position), ({ value, end }) => ({ token: { kind: "string", value, position } as Token, end }))
  }
  const segment = afterDot ? readSegment(text, position) : undefined
  if (segment !== undefined) return segment
  const literal = match(number, text, position)
  if (literal !== undefined) return readNumber(text, position, literal)
  const word = match(identifier, text, position)
  if (word === COUNTER_PREFIX && text[position + word.length] === ".") return readCounter(text, position)
  if (word !== undefined) return read({ kind: "identifier", text: word, position }, position + word.length)
  const symbol = punctuation.find((p) => text.startsWith(p, position))
  return symbol === undefined ? unexpected(text, position) : read({ kind: "punctuation", text: symbol, position }, position + symbol.length)
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
    const previous = tokens.at(-1)
    const next = readToken(text, position, previous?.kind === "punctuation" && previous.text === ".")
    if (Result.isFailure(next)) return Result.fail(next.failure)
    tokens.push(next.success.token)
    position = next.success.end
  }
  tokens.push({ kind: "end", position: text.length })
  return Result.succeed(tokens)
}
