import { actionField, type ConditionAst, keywords, literal, name, orderField, stepFlag } from "./ConditionAst.js"
import { type Cursor, describe } from "./conditionCursor.js"
import type { Token } from "./tokenize.js"
import { COUNTER_PREFIX } from "./tokenize.js"

/** The word that starts a job order field (`order.Priority`); `"order".x` is an action's field. */
export const ORDER_PREFIX = "order"

type NameToken = Extract<Token, { kind: "identifier" | "string" }>

/** A name as written: a word, or the text of a quoted name (`"verify-2"`); undefined for anything else. */
const nameOf = (cursor: Cursor, token: Token): string | undefined => {
  if (token.kind === "identifier") return token.text
  if (token.kind !== "string") return undefined
  cursor.uses(`the quoted name ${JSON.stringify(token.value)}`, token)
  return token.value
}

/** `order.` then one or more segments: words, indexes or quoted names. */
const orderPath = (cursor: Cursor, first: Token): ConditionAst => {
  const path: Array<string> = []
  do {
    const segment = cursor.next()
    const text = segment.kind === "index" ? segment.text : nameOf(cursor, segment)
    if (text === undefined) cursor.fail(`expected a job order field after '${[ORDER_PREFIX, ...path].join(".")}.' but found ${describe(segment)}`, segment)
    path.push(text)
  } while (cursor.accept("."))
  cursor.uses(`the job order field ${[ORDER_PREFIX, ...path].join(".")}`, first)
  return orderField(path)
}

/** `action.field`, or `Step.X` / `Step.T` when the name before the dot is a step's. */
const fieldOf = (cursor: Cursor, owner: string, first: NameToken): ConditionAst => {
  const written = first.kind === "string" ? JSON.stringify(owner) : owner
  const token = cursor.next()
  const field = nameOf(cursor, token)
  if (field === undefined) return cursor.fail(`expected a field name after '${written}.' but found ${describe(token)}`, token)
  const after = cursor.peek()
  if (after.kind === "punctuation" && after.text === ".") cursor.fail("only action.field is supported, not deeper paths", after)
  if ((field === "X" || field === "T") && cursor.steps.has(owner)) {
    cursor.uses(`the step ${field === "X" ? "flag" : "time"} ${written}.${field}`, first)
    return stepFlag(owner, field)
  }
  return actionField(owner, field)
}

/**
 * What a word or a quoted name starts: a keyword literal or a bare name when it stands alone (a
 * quoted one alone is a string), else the reference after its `.`. Quoting a name only spells
 * it: `"counter".x` and `"order".x` are action fields.
 */
export const reference = (cursor: Cursor, first: NameToken): ConditionAst => {
  const dot = cursor.peek()
  if (!cursor.accept(".")) {
    if (first.kind === "string") return literal(first.value)
    const keyword = keywords.get(first.text)
    return keyword === undefined ? name(first.text) : literal(keyword)
  }
  if (first.kind === "identifier") {
    // `counter.x` is one token (tokenize.ts); spaced out it would silently read an action's field.
    if (first.text === COUNTER_PREFIX) cursor.fail("write a counter as counter.<name>, without spaces", dot)
    if (first.text === ORDER_PREFIX) return orderPath(cursor, first)
  }
  return fieldOf(cursor, nameOf(cursor, first)!, first)
}
