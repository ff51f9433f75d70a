import { ConfigEventTypes, TRIGGER_CONFIG_EVENT_TYPE } from "@microdcs/job-control"
import { methodPayload, methods, MethodEventTypes, queries, QueryEventTypes, transitionTable } from "@microdcs/job-state"
import { JOURNAL_CONFIG_EVENT_TYPE } from "@microdcs/journal"
import { referenceKinds } from "@microdcs/keyschema"

/**
 * Every request an MES (or an operator's tool) sends on the command topic, by CloudEvent type:
 * the job control methods, the two queries and the configuration kinds. A configuration type
 * with a PUT and a DELETE payload has a message for each (the `method` user property tells them
 * apart).
 */

export type MethodHeader = "any" | "put" | "delete"

export interface RequestVariant {
  /** The message's name. */
  readonly key: string
  /** The `method` user property it carries, for a configuration. */
  readonly method?: MethodHeader
  /** The payload schema's name; none for a request that carries no data. */
  readonly payload?: string
}

export interface RequestKind {
  /** The operation's and the reply message's name stem. */
  readonly key: string
  readonly type: string
  readonly summary: string
  readonly variants: ReadonlyArray<RequestVariant>
  /** The reply payload schema's name. */
  readonly reply: string
}

const configNames: Readonly<Record<string, string>> = {
  equipment: "Equipment",
  materialclass: "MaterialClass",
  materialdefinition: "MaterialDefinition",
  personnel: "Personnel",
  physicalasset: "PhysicalAsset",
  workmaster: "WorkMaster",
  jobacceptance: "JobAcceptance",
  trigger: "Trigger",
  journal: "Journal"
}

const transitionSummary = (method: (typeof methods)[number]): string => {
  const { from, to } = transitionTable[method]
  const target = to.startsWith("*_") ? `the ${to.slice(2)} substate of its main state` : to
  return `Job control method ${method} (data: the ${methodPayload[method]}): moves a job order from ${from.join(", ")} to ${target}.`
}

const methodRequests = (): ReadonlyArray<RequestKind> =>
  methods.map((method) => ({
    key: method,
    type: MethodEventTypes[method],
    summary: transitionSummary(method),
    variants: [{ key: method, payload: methodPayload[method] === "JobOrder" ? "job-order-request" : "job-order-id-request" }],
    reply: "method-reply"
  }))

const queryRequests = (): ReadonlyArray<RequestKind> => [
  {
    key: queries[0],
    type: QueryEventTypes.RequestJobResponseByJobOrderID,
    summary: "Machinery Jobs query: the job response of one job order.",
    variants: [{ key: queries[0], payload: "job-response-by-id-request" }],
    reply: "job-response-by-id-reply"
  },
  {
    key: queries[1],
    type: QueryEventTypes.RequestJobResponseByJobOrderState,
    summary: "Machinery Jobs query: the job responses of a state, a page at a time.",
    variants: [{ key: queries[1], payload: "job-responses-by-state-request" }],
    reply: "job-responses-by-state-reply"
  }
]

/** A configuration kind whose PUT and DELETE carry different data (DELETE without `remove`: no data). */
const putAndDelete = (kind: string, type: string, put: string, remove: string | undefined, reply: string): RequestKind => {
  const key = `Config${configNames[kind]}`
  return {
    key,
    type,
    summary: `Configuration of the scope's ${kind}: PUT stores, DELETE removes (\`method\` user property).`,
    variants: [
      { key, method: "put", payload: put },
      { key: `${key}Delete`, method: "delete", ...(remove === undefined ? {} : { payload: remove }) }
    ],
    reply
  }
}

const configRequests = (): ReadonlyArray<RequestKind> => [
  ...referenceKinds.map((kind) => ({
    key: `Config${configNames[kind]}`,
    type: ConfigEventTypes[kind],
    summary: `Configuration of the scope's ${kind} list: PUT adds the ids, DELETE removes them (\`method\` user property).`,
    variants: [{ key: `Config${configNames[kind]}`, method: "any" as const, payload: `config-${kind}` }],
    reply: "config-reference-reply"
  })),
  putAndDelete("workmaster", ConfigEventTypes.workmaster, "work-master", "work-master-delete", "work-master-reply"),
  putAndDelete("jobacceptance", ConfigEventTypes.jobacceptance, "job-acceptance", undefined, "job-acceptance-reply"),
  putAndDelete("trigger", TRIGGER_CONFIG_EVENT_TYPE, "trigger", "trigger-delete", "trigger-reply"),
  putAndDelete("journal", JOURNAL_CONFIG_EVENT_TYPE, "journal-config", "journal-config-delete", "journal-config-reply")
]

/** Every request kind, methods first, then queries, then configuration. */
export const requestKinds = (): ReadonlyArray<RequestKind> => [...methodRequests(), ...queryRequests(), ...configRequests()]
