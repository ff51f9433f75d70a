import { asArray, asOptionalText, asText, UnexpectedReply } from "./Reply.js"
import { defineScript } from "./ScriptDescriptor.js"
import { type JobOrderSearchFacts, searchFactArgs } from "./SearchFactArgs.js"
import { decodeWriteReply, type WriteReply } from "./WriteReply.js"
import { decodeWrongType, type WrongTypeReply } from "./WrongTypeReply.js"

export type { JobOrderSearchFacts } from "./SearchFactArgs.js"

export interface PutJobOrderArgs {
  readonly expectedVersion: number
  readonly scope: string
  readonly id: string
  readonly priority: number
  readonly doc: string
  readonly op: string
  readonly change: string
  readonly nudgeChannel: string
  /** 0 = no limit. */
  readonly limit: number
  /** 0 = keep listed; > 0 = unlist and expire the document after this many ms. */
  readonly retainMs: number
  /** Who caused the write (JSON text), kept in the change entry's `origin` field; "" = none. */
  readonly origin: string
  /** The doc's search facts; absent, the script decodes the doc for them. */
  readonly facts?: JobOrderSearchFacts | undefined
}

export const putJobOrder = defineScript({
  file: "put-joborder-7.lua",
  keys: ["doc", "list", "scopes", "changes", "search", "responses", "failed"],
  encodeArgs: (a: PutJobOrderArgs) => [
    a.expectedVersion, a.scope, a.id, a.priority, a.doc, a.op, a.change, a.nudgeChannel, a.limit, a.retainMs, a.origin, ...searchFactArgs(a.facts)
  ],
  decodeReply: decodeWriteReply("put-joborder", ["ok", "conflict", "scope", "limit", "wrongtype"])
})

/** A create's arguments are a put's, without the version (always a create) and the retention (never retired). */
export interface CreateJobOrderDoneArgs extends Omit<PutJobOrderArgs, "expectedVersion" | "retainMs"> {
  /** The request's claim token, its done TTL and the reply kept with the mark ("" = none). */
  readonly token: string
  readonly ttlMs: number
  readonly reply: string
}

/** `lost`: the caller no longer holds the claim (`stored`: what the key holds, null when gone); nothing was written. */
export type CreateJobOrderDoneReply =
  | Extract<WriteReply, { readonly status: "ok" | "conflict" | "scope" | "limit" | "wrongtype" }>
  | { readonly status: "lost"; readonly stored: string | null }

const decodeCreateWrite = decodeWriteReply("create-joborder-done", ["ok", "conflict", "scope", "limit", "wrongtype"])

/** A job order's create and its request's done mark, in one atomic step (see the script's header). */
export const createJobOrderDone = defineScript({
  file: "create-joborder-done-6.lua",
  keys: ["doc", "list", "scopes", "changes", "dedupe", "search"],
  encodeArgs: (a: CreateJobOrderDoneArgs) => [
    a.scope, a.id, a.priority, a.doc, a.op, a.change, a.nudgeChannel, a.limit, a.origin, a.token, a.ttlMs, a.reply, ...searchFactArgs(a.facts)
  ],
  decodeReply: (raw): CreateJobOrderDoneReply => {
    const reply = asArray("create-joborder-done", raw)
    if (reply[0] !== "lost") return decodeCreateWrite(raw)
    return { status: "lost", stored: asOptionalText("create-joborder-done", reply[1] ?? null) }
  }
})

export interface DeleteDocumentArgs {
  readonly expectedVersion: number
  readonly scope: string
  readonly id: string
  readonly op: string
  readonly change: string
  readonly nudgeChannel: string
}

export const deleteJobOrder = defineScript({
  file: "delete-joborder-7.lua",
  keys: ["doc", "list", "scopes", "changes", "search", "responses", "failed"],
  encodeArgs: (a: DeleteDocumentArgs) => [a.expectedVersion, a.scope, a.id, a.op, a.change, a.nudgeChannel],
  decodeReply: decodeWriteReply("delete-joborder", ["ok", "notfound", "conflict", "retry", "wrongtype"])
})

export interface ListJobOrdersArgs {
  readonly offset: number
  readonly count: number
}

export type ListJobOrdersReply =
  | { readonly status: "ok"; readonly items: ReadonlyArray<{ readonly id: string; readonly priority: number }> }
  | WrongTypeReply

const decodeListJobOrders = (raw: unknown): ListJobOrdersReply => {
  const script = "list-joborder"
  const reply = asArray(script, raw)
  const status = asText(script, reply[0])
  if (status === "wrongtype") return decodeWrongType(script, reply)
  if (status !== "ok" || reply.length % 2 !== 1) throw new UnexpectedReply(script, raw)
  const items: Array<{ id: string; priority: number }> = []
  for (let i = 1; i < reply.length; i += 2) {
    const priority = Number(asText(script, reply[i + 1]))
    if (!Number.isFinite(priority)) throw new UnexpectedReply(script, raw)
    items.push({ id: asText(script, reply[i]), priority })
  }
  return { status, items }
}

/** Read only: one page of a scope's job orders, highest priority first, ties by id ascending. */
export const listJobOrders = defineScript({
  file: "list-joborder-1.lua",
  keys: ["list"],
  encodeArgs: (a: ListJobOrdersArgs) => [a.offset, a.count],
  decodeReply: decodeListJobOrders
})
