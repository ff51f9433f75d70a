import type { KeyFamily } from "@microdcs/keyschema"

/**
 * What the indexes of an island must say, given its documents, and the
 * inconsistencies the index check reports. Pure: no I/O; the reads live in IndexDocuments.ts
 * and IndexMembers.ts.
 */

interface Located {
  /** The key the inconsistency is about: an index key, `scopes`, or a document key. */
  readonly key: string
  /** The scope it belongs to; `null` when no scope can be told (a by-order pointer to nothing). */
  readonly scope: string | null
}

/** An index names an id whose document does not exist (or is not a hash). */
export interface IndexEntryWithoutDocument extends Located {
  readonly kind: "index-entry-without-document"
  readonly member: string
  readonly documentKey: string
  readonly expected: "hash"
  /** `none`, or the type the document key holds. */
  readonly found: string
}

/** An index names a document that exists but does not belong there (other scope or state, retired). */
export interface StaleMember extends Located {
  readonly kind: "stale-member"
  readonly member: string
  readonly documentKey: string
  /** What a document needs to belong, e.g. `scope=s1 state=Running`. */
  readonly expected: string
  /** What the document holds. */
  readonly found: string
}

/** A document lacks an entry it should have (a list member, a by-state member, its by-order pointer or response-set member). */
export interface DocumentMissingFromIndex extends Located {
  readonly kind: "document-missing-from-index"
  /** The document id. */
  readonly member: string
  readonly documentKey: string
  /** `member`, `member with score n`, or `pointer to {id}`. */
  readonly expected: string
  /** `absent`, or for a pointer the id it names instead. */
  readonly found: string
}

/** A list member whose score is not the one its document implies (priority, start time). */
export interface WrongScore extends Located {
  readonly kind: "wrong-score"
  readonly member: string
  readonly documentKey: string
  readonly expected: number
  readonly found: number
}

/** A by-order pointer names a response that carries another job order. */
export interface StalePointer extends Located {
  readonly kind: "stale-pointer"
  /** The response id the pointer names. */
  readonly member: string
  readonly documentKey: string
  /** The job order id of the pointer. */
  readonly expected: string
  /** The job order id the named response carries ("" = none). */
  readonly found: string
}

/** A scope holds data but is missing from `scopes`. */
export interface ScopeNotRegistered extends Located {
  readonly kind: "scope-not-registered"
  readonly member: string
  /** A key that holds data of the scope. */
  readonly source: string
  readonly expected: "member"
  readonly found: "absent"
}

/** An index key, `scopes` or a document key holds another Valkey type. */
export interface WrongTypeKey extends Located {
  readonly kind: "wrong-type"
  readonly member: null
  readonly expected: string
  readonly found: string
}

/** A document hash without the fields its indexes derive from (rebuild cannot place it). */
export interface MalformedDocument extends Located {
  readonly kind: "malformed-document"
  readonly member: string
  readonly expected: string
  readonly found: string
}

export type Inconsistency =
  | IndexEntryWithoutDocument
  | StaleMember
  | DocumentMissingFromIndex
  | WrongScore
  | StalePointer
  | ScopeNotRegistered
  | WrongTypeKey
  | MalformedDocument

export type InconsistencyKind = Inconsistency["kind"]

/** Identity for de-duplication: SCAN may return a key twice, and several documents see one broken key. */
export const inconsistencyId = (i: Inconsistency): string => `${i.kind}\u0000${i.key}\u0000${i.member ?? ""}`

/** The document families and what the rebuild reads of them. */
export type DocumentFamily = "jobOrder" | "jobResponse" | "workMaster"

export const documentFamilies: ReadonlyArray<DocumentFamily> = ["jobOrder", "jobResponse", "workMaster"]

/** The derived index families, with the type each key must hold and the documents it indexes. */
export const indexFamilies = {
  jobOrderList: { type: "zset", document: "jobOrder" },
  jobResponseList: { type: "zset", document: "jobResponse" },
  jobResponseByState: { type: "set", document: "jobResponse" },
  jobResponseByOrder: { type: "string", document: "jobResponse" },
  jobResponseOfOrder: { type: "zset", document: "jobResponse" },
  workMasterList: { type: "set", document: "workMaster" }
} as const satisfies Record<string, { type: string; document: DocumentFamily }>

export type IndexFamily = keyof typeof indexFamilies

export const isIndexFamily = (family: KeyFamily): family is IndexFamily => family in indexFamilies

/** The set and sorted-set indexes: membership depends on fields of the member's document. */
export type MemberIndexFamily = Exclude<IndexFamily, "jobResponseByOrder">

/** When a document belongs in one set or sorted-set index key: what judging its members needs. */
export interface MemberRule {
  readonly key: string
  /** `null` for an index of no scope (the by-order response sets). */
  readonly scope: string | null
  readonly indexType: "set" | "zset"
  /** Only a document without a TTL belongs (a retired job order leaves its list). */
  readonly persistentOnly: boolean
  /** Field values the document must hold. */
  readonly belongsWhen: ReadonlyArray<readonly [field: string, value: string]>
}

/** The member rule of one core index key. */
export interface Membership extends MemberRule {
  readonly family: MemberIndexFamily
  readonly document: DocumentFamily
}

export const membershipOf = (family: MemberIndexFamily, key: string, parts: Readonly<Record<string, string>>): Membership => {
  const { type, document } = indexFamilies[family]
  if (family === "jobResponseOfOrder") {
    const belongsWhen = [["order", parts["orderId"] ?? ""]] as const
    return { family, key, scope: null, indexType: type, document, persistentOnly: false, belongsWhen }
  }
  const scope = parts["scope"] ?? ""
  const belongsWhen: Array<readonly [string, string]> = [["scope", scope]]
  if (family === "jobResponseByState") belongsWhen.push(["state", parts["state"] ?? ""])
  return { family, key, scope, indexType: type, document, persistentOnly: family === "jobOrderList", belongsWhen }
}

/** A member's document as read for the member side: its type, fields and TTL state. */
export interface MemberDocument {
  /** `hash`, `none`, or another type. */
  readonly type: string
  readonly fields: Readonly<Record<string, string | null>>
  readonly persistent: boolean
}

const describe = (pairs: ReadonlyArray<readonly [string, string | null]>) => pairs.map(([f, v]) => `${f}=${v ?? "(none)"}`).join(" ")

/** Judges one member of a set or sorted-set index; `undefined` when it belongs there. */
export const judgeMember = (index: MemberRule, id: string, documentKey: string, doc: MemberDocument): Inconsistency | undefined => {
  const at = { key: index.key, scope: index.scope, member: id, documentKey }
  if (doc.type !== "hash") return { kind: "index-entry-without-document", ...at, expected: "hash", found: doc.type }
  const mismatch = index.belongsWhen.some(([field, value]) => doc.fields[field] !== value)
  if (!mismatch && (doc.persistent || !index.persistentOnly)) return undefined
  const retired = index.persistentOnly ? " persistent" : ""
  return {
    kind: "stale-member",
    ...at,
    expected: describe(index.belongsWhen) + retired,
    found: describe(index.belongsWhen.map(([field]) => [field, doc.fields[field] ?? null] as const)) + (doc.persistent ? "" : " retired")
  }
}

// An ISO 8601 date or date-time, as OPC UA DateTime values appear in JSON.
const isoDate = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/

/**
 * The list score of a job response: its `start` field; for a document written before that
 * field existed, the `StartTime` of its JSON when that is a number or an ISO date. `undefined`
 * when neither tells: the rebuild then keeps an existing score, else scores 0.
 */
export const startScore = (start: string | null, docText: string | null): number | undefined => {
  if (start !== null && start !== "") {
    const n = Number(start)
    if (Number.isFinite(n)) return n
  }
  if (docText === null) return undefined
  let startTime: unknown
  try {
    startTime = (JSON.parse(docText) as { StartTime?: unknown } | null)?.StartTime
  } catch {
    return undefined
  }
  if (typeof startTime === "number") return Number.isFinite(startTime) ? startTime : undefined
  if (typeof startTime === "string" && isoDate.test(startTime)) {
    const ms = Date.parse(startTime)
    return Number.isFinite(ms) ? ms : undefined
  }
  return undefined
}

/** A score as the server returns it (`ZSCORE`), compared as a double like the scripts do. */
export const sameScore = (stored: string, expected: number): boolean => Number(stored) === expected
