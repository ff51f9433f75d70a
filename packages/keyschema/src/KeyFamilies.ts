/**
 * Every key family of the island (data-layer.md §2), as templates after `{prefix}:`.
 * `{name}` is an encoded part; everything else is literal. Keep this the only place a key
 * shape is written down: builders, the parser and the admin CLI all derive from it.
 */
export const keyFamilies = {
  dedupe: "ce:dedupe:{hash}",
  startLease: "lock:poststart:{configId}",
  jobOrder: "joborder:{id}",
  jobOrderList: "joborder:list:{scope}",
  jobResponse: "jobresponse:{id}",
  jobResponseList: "jobresponse:list:{scope}",
  jobResponseByOrder: "jobresponse:byorder:{orderId}",
  jobResponseByState: "jobresponse:bystate:{scope}:{state}",
  workMaster: "workmaster:{id}",
  workMasterList: "workmaster:list:{scope}",
  referenceList: "ref:{kind}:{scope}",
  jobAcceptance: "jobacceptance:{scope}",
  scopes: "scopes",
  changes: "changes:{scope}",
  publishSequence: "pubseq:{scope}",
  publisherCursors: "publisher:cursors",
  publisherLease: "lock:publisher",
  sfcState: "sfc:state:{jobId}",
  sfcWork: "sfc:work:{scope}",
  sfcActive: "sfc:active:{scope}",
  sfcDue: "sfc:due:{scope}",
  sfcHeartbeat: "sfc:heartbeat",
  sfcWaits: "sfc:waits:{scope}:{typeId}",
  sfcEvent: "sfc:event:{scope}:{source}|{id}",
  sfcCorrelation: "sfc:correlation:{correlationId}",
  /** Dead letters of one poller kind and scope (`changes`, `sfc`): entries that failed every delivery. */
  deadLetterStream: "dlq:{kind}:{scope}",
  nudge: "nudge:{kind}"
} as const

export type KeyFamily = keyof typeof keyFamilies

type PartNames<T extends string> = T extends `${string}{${infer P}}${infer Rest}` ? P | PartNames<Rest> : never

/** The named parts a family's template needs, e.g. `{ scope: string; state: string }`. */
export type KeyParts<F extends KeyFamily> = { readonly [P in PartNames<(typeof keyFamilies)[F]>]: string }

/** The five ISA-95 reference lists a job order can point into. */
export const referenceKinds = ["equipment", "materialclass", "materialdefinition", "personnel", "physicalasset"] as const
export type ReferenceKind = (typeof referenceKinds)[number]

export const isReferenceKind = (value: string): value is ReferenceKind =>
  (referenceKinds as ReadonlyArray<string>).includes(value)

/** A template split into literal and part tokens, with the separator (`:` or `|`) before each. */
export interface TemplateToken {
  readonly separator: "" | ":" | "|"
  readonly literal?: string
  readonly part?: string
}

export const tokenize = (text: string): ReadonlyArray<{ separator: "" | ":" | "|"; text: string }> => {
  const tokens: Array<{ separator: "" | ":" | "|"; text: string }> = []
  let separator: "" | ":" | "|" = ""
  let start = 0
  for (let i = 0; i <= text.length; i++) {
    const ch = text[i]
    if (i === text.length || ch === ":" || ch === "|") {
      tokens.push({ separator, text: text.slice(start, i) })
      separator = ch === ":" || ch === "|" ? ch : ""
      start = i + 1
    }
  }
  return tokens
}

const compile = (template: string): ReadonlyArray<TemplateToken> =>
  tokenize(template).map(({ separator, text }) =>
    text.startsWith("{") ? { separator, part: text.slice(1, -1) } : { separator, literal: text }
  )

export const compiledFamilies: ReadonlyArray<readonly [KeyFamily, ReadonlyArray<TemplateToken>]> = (
  Object.keys(keyFamilies) as Array<KeyFamily>
).map((family) => [family, compile(keyFamilies[family])] as const)

export const compiledFamily = (family: KeyFamily): ReadonlyArray<TemplateToken> =>
  compiledFamilies.find(([f]) => f === family)![1]
