/**
 * Who caused a change of a job order or an input to its execution: the MES (its request's
 * CloudEvent `source`), an operator on the CLI (`alice@host`), the console (reserved: it is
 * read-only today), the engine itself, or a trigger. Recorded with every job-control write (the
 * change entry and the job order record) and every engine input that comes from outside, so the
 * history and the execution log say "aborted by cli:alice@host", not "by the MES".
 */

export const originKinds = ["mes", "cli", "console", "engine", "trigger"] as const
export type OriginKind = (typeof originKinds)[number]

export interface Origin {
  readonly kind: OriginKind
  /** Who within the kind: the MES's source, the operator (`alice@host`), the trigger id, ... */
  readonly id: string
  /** The comment the method carried, if any (cut to `MAX_ORIGIN_COMMENT_LENGTH`). */
  readonly comment?: string
  /**
   * Where the actor was, when known: the console's remote address (`203.0.113.7`), the CLI's
   * host. Absent for the MES (the MQTT binding sees no login or address: its `id` is its source),
   * the engine, a trigger, and every entry written before it was recorded.
   */
  readonly from?: string
}

/** The longest id an origin keeps: a longer MES source is cut, a longer operator name refused. */
export const MAX_ORIGIN_ID_LENGTH = 256
/** The longest `from` an origin keeps (a longer one is cut). */
export const MAX_ORIGIN_FROM_LENGTH = 256
/** The longest comment an origin keeps (the job order record keeps the whole comment). */
export const MAX_ORIGIN_COMMENT_LENGTH = 500

/** The engine's own moves (Run, Complete, Abort of a failed job). */
export const ENGINE_ORIGIN: Origin = { kind: "engine", id: "sfc" }

const cut = (text: string, length: number): string => (text.length > length ? `${text.slice(0, length - 1)}…` : text)

const isOriginKind = (value: unknown): value is OriginKind => typeof value === "string" && (originKinds as ReadonlyArray<string>).includes(value)

/** `kind:id`, as the history and the log show it: `cli:alice@host`, `mes:urn:mes:line-1`. */
export const originText = (origin: Origin): string => `${origin.kind}:${origin.id}`

/** An origin with `from` added (cut to its bound, control characters dropped); the same origin when there is none. */
export const withFrom = (origin: Origin, from: string | undefined): Origin => {
  // eslint-disable-next-line no-control-regex
  const clean = from?.replace(/[\u0000-\u001f\u007f]/g, "").trim()
  return clean === undefined || clean === "" ? origin : { ...origin, from: cut(clean, MAX_ORIGIN_FROM_LENGTH) }
}

/** An origin with `comment` added (cut to its bound); the same origin when there is none. */
export const withComment = (origin: Origin, comment: string | undefined): Origin =>
  comment === undefined || comment === "" ? origin : { ...origin, comment: cut(comment, MAX_ORIGIN_COMMENT_LENGTH) }

/** The MES behind a request: its CloudEvent `source` (cut to `MAX_ORIGIN_ID_LENGTH`; the MQTT binding sees no login). */
export const mesOrigin = (source: string): Origin => ({ kind: "mes", id: cut(source, MAX_ORIGIN_ID_LENGTH) })

/** Every problem of an origin given by hand (the CLI's `--actor`); empty when it may be recorded. */
export const originProblems = (origin: { readonly kind: unknown; readonly id: unknown }): ReadonlyArray<string> => {
  const problems: Array<string> = []
  if (!isOriginKind(origin.kind)) problems.push(`kind ${JSON.stringify(origin.kind)} is not one of ${originKinds.join(", ")}`)
  if (typeof origin.id !== "string" || origin.id.trim() === "") problems.push("the id is empty")
  else {
    if (origin.id.length > MAX_ORIGIN_ID_LENGTH) problems.push(`the id is ${origin.id.length} characters long, at most ${MAX_ORIGIN_ID_LENGTH}`)
    // eslint-disable-next-line no-control-regex
    if (/[\u0000-\u001f\u007f]/.test(origin.id)) problems.push("the id holds control characters")
  }
  return problems
}

/** The stored form: JSON text (the change entry's `origin` field). */
export const encodeOrigin = (origin: Origin): string => JSON.stringify(origin)

/**
 * A stored origin (an object, or its JSON text), or `undefined` for none or anything that does not
 * read as one: an entry written before origins were recorded shows as before, one written before
 * `from` was recorded reads without it. Never throws.
 */
export const decodeOrigin = (value: unknown): Origin | undefined => {
  let parsed = value
  if (typeof value === "string") {
    try {
      parsed = JSON.parse(value)
    } catch {
      return undefined
    }
  }
  if (typeof parsed !== "object" || parsed === null) return undefined
  const { kind, id, comment, from } = parsed as Record<string, unknown>
  if (!isOriginKind(kind) || typeof id !== "string") return undefined
  return { kind, id, ...(typeof comment === "string" ? { comment } : {}), ...(typeof from === "string" ? { from } : {}) }
}
