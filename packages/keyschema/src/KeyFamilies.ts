import { KeyFamilyError, type RegisteredFamily, registerFamilies } from "./FamilyRegistration.js"
import { defineKeyFamilies } from "./KeyFamilySet.js"
import type { TemplateParts, TemplateToken } from "./KeyTemplate.js"
import { nodeSeqRule } from "./ExecutionLogKeys.js"

/**
 * Every key family of the island, as templates after `{prefix}:`.
 * `{name}` is an encoded part; everything else is literal. Keep this the only place a core key
 * shape is written down: builders, the parser and the admin CLI all derive from it. Extensions
 * add families of their own with `defineKeyFamilies` and `schema.extend`.
 */
export const keyFamilies = {
  dedupe: "ce:dedupe:{hash}",
  /** A dedupe claim holder's liveness (one per running process), a short-lived string it renews: gone means its claims may be taken over. */
  dedupeHolder: "ce:holder:{holder}",
  startLease: "lock:poststart:{configId}",
  jobOrder: "joborder:{id}",
  jobOrderList: "joborder:list:{scope}",
  /** The search index of a scope's job orders: one sorted set read by lex range (store's JobOrderSearch). */
  jobOrderSearch: "joborder:search:{scope}",
  jobResponse: "jobresponse:{id}",
  jobResponseList: "jobresponse:list:{scope}",
  jobResponseByOrder: "jobresponse:byorder:{orderId}",
  /** Every response that carries the job order, scored by its last write (server µs): the by-order pointer falls back on it. */
  jobResponseOfOrder: "jobresponse:oforder:{orderId}",
  jobResponseByState: "jobresponse:bystate:{scope}:{state}",
  /** The scope's job responses in a failure state (Aborted), scored by end time (epoch ms): the incident view's newest failures. */
  jobResponseFailed: "jobresponse:failed:{scope}",
  workMaster: "workmaster:{id}",
  workMasterList: "workmaster:list:{scope}",
  referenceList: "ref:{kind}:{scope}",
  jobAcceptance: "jobacceptance:{scope}",
  scopes: "scopes",
  /** The version each index phase of the island is built to (a hash: field = phase, value = version): the store's index upgrade records it. */
  indexVersions: "index:versions",
  /** The lease of the index upgrade: of the daemons that start at once, the one that holds it walks the island. */
  indexUpgradeLease: "lock:indexupgrade",
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
  /** The jobs whose pull event of the type waits for the correlation key `value` at `place` (a sorted set by wait start). */
  sfcKeyedWaits: "sfc:keyed:{scope}:{typeId}:{place}:{value}",
  /** The places the type's keyed waits read their key at, each with how many keyed waits read it there (a hash). */
  sfcKeyPlaces: "sfc:keyplaces:{scope}:{typeId}",
  sfcEvent: "sfc:event:{scope}:{source}|{id}",
  sfcCorrelation: "sfc:correlation:{correlationId}",
  /** A recipe as executions run it, stored once by its digest and never changed (many states share it). */
  sfcRecipe: "sfc:recipe:{digest}",
  /** Dead letters of one poller kind and scope (`changes`, `sfc`): entries that failed every delivery. */
  deadLetterStream: "dlq:{kind}:{scope}",
  /** A poller consumer's liveness, a short-lived string it renews: gone means its pending entries may be taken over. */
  pollerHeartbeat: "poller:heartbeat:{kind}:{group}:{consumer}",
  nudge: "nudge:{kind}",
  /** One execution of the log: job, recipe digest, parent node, times, status, last sequence number. */
  executionLogExec: "dag:log:{executionId}:exec",
  /** One node of an execution; `seq` is six digits, zero-padded (`nodeSeqPart`), so key order is run order. */
  executionLogNode: "dag:log:{executionId}:n:{seq}",
  /** Every execution id by open time (a sorted set): retention and listing. */
  executionLogExecutions: "dag:log:executions",
  /** Commit requests of one scope (a stream of log keys), consumed by the storage role; outside `dag:log:` on purpose. */
  executionLogCommits: "dag:commits:{scope}",
  /** Every trigger of the island, one hash: field = trigger id, value = the row as JSON. */
  triggers: "dag:triggers",
  /**
   * The claim of one trigger edit's announcement (a short-lived string set only if absent): of the
   * daemons that see the nudge of an edit nobody announced, the one that sets it announces it.
   */
  triggerAnnouncement: "dag:triggers:announced:{edit}"
} as const

export type KeyFamily = keyof typeof keyFamilies

/** The named parts a family's template needs, e.g. `{ scope: string; state: string }`. */
export type KeyParts<F extends KeyFamily> = TemplateParts<(typeof keyFamilies)[F]>

/** The five ISA-95 reference lists a job order can point into. */
export const referenceKinds = ["equipment", "materialclass", "materialdefinition", "personnel", "physicalasset"] as const
export type ReferenceKind = (typeof referenceKinds)[number]

export const isReferenceKind = (value: string): value is ReferenceKind =>
  (referenceKinds as ReadonlyArray<string>).includes(value)

/** The core families with their part rules: every schema starts from these. */
export const coreKeyFamilies = defineKeyFamilies({
  ...keyFamilies,
  referenceList: { template: keyFamilies.referenceList, parts: { kind: { oneOf: referenceKinds } } },
  executionLogNode: { template: keyFamilies.executionLogNode, parts: { seq: nodeSeqRule } }
})

const registered = registerFamilies([], coreKeyFamilies)
// The core table is ours: a bad template there is a bug, caught by every test that imports this.
if (registered instanceof KeyFamilyError) throw new Error(`core key families: ${registered.message}`)

/** The core families, compiled and checked against each other. */
export const coreRegisteredFamilies = registered as ReadonlyArray<RegisteredFamily<KeyFamily>>

export const compiledFamilies: ReadonlyArray<readonly [KeyFamily, ReadonlyArray<TemplateToken>]> = coreRegisteredFamilies.map(
  (family) => [family.name, family.tokens] as const
)

export const compiledFamily = (family: KeyFamily): ReadonlyArray<TemplateToken> =>
  compiledFamilies.find(([f]) => f === family)![1]
