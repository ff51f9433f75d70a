import { asArray, asInteger, asText, decodeWrongType, defineScript, type ScriptArg, UnexpectedReply, type WrongTypeReply } from "@microdcs/lua-scripts"
import { journalLua } from "./JournalLua.js"

/** The journal's scripts, one descriptor per file of `lua/` (headers there list KEYS, ARGV and replies). */

const statusOf = (script: string, raw: unknown): { readonly reply: ReadonlyArray<unknown>; readonly status: string } => {
  const reply = asArray(script, raw)
  return { reply, status: asText(script, reply[0]) }
}

const bytes = (script: string, raw: unknown): Buffer => {
  if (Buffer.isBuffer(raw)) return raw
  if (typeof raw === "string") return Buffer.from(raw, "latin1")
  throw new UnexpectedReply(script, raw)
}

export interface InsertSearchKey {
  readonly indexKey: string
  readonly latestKey: string
  readonly value: string
}

export interface InsertCounter {
  readonly totalKey: string
  readonly bucketKey: string
  readonly value: string
  readonly bucket: number
  readonly amount: number
  readonly expiresAt: number
  readonly member: string
}

export interface InsertArgs {
  readonly id: string
  readonly ref: number
  readonly payload: Buffer
  readonly journal: string
  readonly newFields: ReadonlyArray<string>
  readonly searchKeys: ReadonlyArray<InsertSearchKey>
  readonly counters: ReadonlyArray<InsertCounter>
}

export type InsertReply =
  | { readonly status: "ok"; readonly fields: ReadonlyArray<readonly [name: string, index: number]> }
  | { readonly status: "duplicate" }
  | { readonly status: "invalid"; readonly what: string }
  | WrongTypeReply

export const journalInsert = defineScript({
  file: "journal-insert-7+.lua",
  dir: journalLua,
  keys: ["payload", "entry", "refdate", "fields", "count", "bytes", "expiry"],
  tailKeys: (a: InsertArgs) => [
    ...a.searchKeys.flatMap((s) => [s.indexKey, s.latestKey]),
    ...a.counters.flatMap((c) => [c.totalKey, c.bucketKey])
  ],
  encodeArgs: (a: InsertArgs): ReadonlyArray<ScriptArg> => [
    a.id, a.ref, a.payload, a.journal, a.newFields.length, a.searchKeys.length, a.counters.length,
    ...a.newFields,
    ...a.searchKeys.map((s) => s.value),
    ...a.counters.flatMap((c) => [c.value, c.bucket, c.amount, c.expiresAt, c.member])
  ],
  decodeReply: (raw): InsertReply => {
    const { reply, status } = statusOf("journal-insert", raw)
    if (status === "duplicate") return { status }
    if (status === "invalid") return { status, what: asText("journal-insert", reply[1]) }
    if (status === "wrongtype") return decodeWrongType("journal-insert", reply)
    if (status !== "ok") throw new UnexpectedReply("journal-insert", raw)
    const fields: Array<readonly [string, number]> = []
    for (let i = 1; i + 1 < reply.length; i += 2) fields.push([asText("journal-insert", reply[i]), asInteger("journal-insert", reply[i + 1])])
    return { status, fields }
  }
})

export interface RecallArgs {
  readonly since: number | undefined
  readonly limit: number
  readonly now: number
  readonly withPayloads: boolean
}

export interface RecalledRow {
  readonly id: string
  readonly time: number
  readonly payload: Buffer | null
}

export type RecallReply = { readonly status: "ok"; readonly rows: ReadonlyArray<RecalledRow> } | WrongTypeReply

export const journalRecall = defineScript({
  file: "journal-recall-3.lua",
  dir: journalLua,
  keys: ["index", "payload", "lru"],
  encodeArgs: (a: RecallArgs) => [a.since === undefined ? "-inf" : a.since, a.limit, a.now, a.withPayloads ? "1" : "0"],
  decodeReply: (raw): RecallReply => {
    const { reply, status } = statusOf("journal-recall", raw)
    if (status === "wrongtype") return decodeWrongType("journal-recall", reply)
    if (status !== "ok") throw new UnexpectedReply("journal-recall", raw)
    const rows: Array<RecalledRow> = []
    for (let i = 1; i + 2 < reply.length; i += 3) {
      const payload = reply[i + 2]
      rows.push({
        id: asText("journal-recall", reply[i]),
        time: Number(asText("journal-recall", reply[i + 1])),
        payload: payload === null || payload === undefined ? null : bytes("journal-recall", payload)
      })
    }
    return { status, rows }
  }
})

export interface ExpireEntry {
  readonly id: string
  readonly entryKey: string
  readonly indexes: ReadonlyArray<{ readonly indexKey: string; readonly latestKey: string; readonly value: string }>
}

export interface ExpireArgs {
  readonly journal: string
  readonly cutoff: number
  readonly entries: ReadonlyArray<ExpireEntry>
}

export type ExpireReply =
  | { readonly status: "ok"; readonly removed: number; readonly bytes: number }
  | { readonly status: "retry"; readonly id: string }
  | WrongTypeReply

export const journalExpire = defineScript({
  file: "journal-expire-5+.lua",
  dir: journalLua,
  keys: ["payload", "refdate", "count", "bytes", "lru"],
  tailKeys: (a: ExpireArgs) => a.entries.flatMap((e) => [e.entryKey, ...e.indexes.flatMap((i) => [i.indexKey, i.latestKey])]),
  encodeArgs: (a: ExpireArgs) => [
    a.journal, a.cutoff, a.entries.length,
    ...a.entries.flatMap((e) => [e.id, e.indexes.length, ...e.indexes.map((i) => i.value)])
  ],
  decodeReply: (raw): ExpireReply => {
    const { reply, status } = statusOf("journal-expire", raw)
    if (status === "ok") return { status, removed: asInteger("journal-expire", reply[1]), bytes: asInteger("journal-expire", reply[2]) }
    if (status === "retry") return { status, id: asText("journal-expire", reply[1]) }
    if (status === "wrongtype") return decodeWrongType("journal-expire", reply)
    throw new UnexpectedReply("journal-expire", raw)
  }
})

export interface ExpiredBucket {
  readonly member: string
  readonly totalKey: string
  readonly bucketKey: string
  readonly value: string
  readonly bucket: string
}

export type CounterExpireReply = { readonly status: "ok"; readonly subtracted: number } | WrongTypeReply

export const counterExpire = defineScript({
  file: "counter-expire-1+.lua",
  dir: journalLua,
  keys: ["expiry"],
  tailKeys: (a: { readonly now: number; readonly buckets: ReadonlyArray<ExpiredBucket> }) => a.buckets.flatMap((b) => [b.totalKey, b.bucketKey]),
  encodeArgs: (a) => [a.now, a.buckets.length, ...a.buckets.flatMap((b) => [b.member, b.value, b.bucket])],
  decodeReply: (raw): CounterExpireReply => {
    const { reply, status } = statusOf("counter-expire", raw)
    if (status === "ok") return { status, subtracted: asInteger("counter-expire", reply[1]) }
    if (status === "wrongtype") return decodeWrongType("counter-expire", reply)
    throw new UnexpectedReply("counter-expire", raw)
  }
})

export type TotalReply = { readonly status: "ok"; readonly total: number } | WrongTypeReply

const decodeTotal = (script: string) => (raw: unknown): TotalReply => {
  const { reply, status } = statusOf(script, raw)
  if (status === "ok") return { status, total: Number(asText(script, reply[1])) }
  if (status === "wrongtype") return decodeWrongType(script, reply)
  throw new UnexpectedReply(script, raw)
}

export const counterRepair = defineScript({
  file: "counter-repair-2.lua",
  dir: journalLua,
  keys: ["total", "buckets"],
  encodeArgs: (a: { readonly value: string }) => [a.value],
  decodeReply: decodeTotal("counter-repair")
})

export type RecountReply = { readonly status: "ok"; readonly entries: number; readonly bytes: number } | WrongTypeReply

export const journalRecount = defineScript({
  file: "journal-recount-3.lua",
  dir: journalLua,
  keys: ["payload", "count", "bytes"],
  encodeArgs: (a: { readonly journal: string }) => [a.journal],
  decodeReply: (raw): RecountReply => {
    const { reply, status } = statusOf("journal-recount", raw)
    if (status === "ok") return { status, entries: asInteger("journal-recount", reply[1]), bytes: asInteger("journal-recount", reply[2]) }
    if (status === "wrongtype") return decodeWrongType("journal-recount", reply)
    throw new UnexpectedReply("journal-recount", raw)
  }
})

export type UnindexReply = { readonly status: "ok"; readonly removed: number } | WrongTypeReply

export const journalUnindex = defineScript({
  file: "journal-unindex-2.lua",
  dir: journalLua,
  keys: ["index", "payload"],
  encodeArgs: (a: { readonly id: string }) => [a.id],
  decodeReply: (raw): UnindexReply => {
    const { reply, status } = statusOf("journal-unindex", raw)
    if (status === "ok") return { status, removed: asInteger("journal-unindex", reply[1]) }
    if (status === "wrongtype") return decodeWrongType("journal-unindex", reply)
    throw new UnexpectedReply("journal-unindex", raw)
  }
})

export type ConfigPutReply = { readonly status: "ok"; readonly created: boolean } | WrongTypeReply

export const journalConfigPut = defineScript({
  file: "journal-config-put-2.lua",
  dir: journalLua,
  keys: ["config", "scopes"],
  encodeArgs: (a: { readonly scope: string; readonly journal: string; readonly json: string; readonly nudgeChannel: string }) => [
    a.scope, a.journal, a.json, a.nudgeChannel
  ],
  decodeReply: (raw): ConfigPutReply => {
    const { reply, status } = statusOf("journal-config-put", raw)
    if (status === "ok") return { status, created: asInteger("journal-config-put", reply[1]) === 1 }
    if (status === "wrongtype") return decodeWrongType("journal-config-put", reply)
    throw new UnexpectedReply("journal-config-put", raw)
  }
})

export type ConfigDeleteReply = { readonly status: "ok" } | { readonly status: "notfound" } | WrongTypeReply

export const journalConfigDelete = defineScript({
  file: "journal-config-delete-2.lua",
  dir: journalLua,
  keys: ["config", "scopes"],
  encodeArgs: (a: { readonly scope: string; readonly journal: string; readonly nudgeChannel: string }) => [a.scope, a.journal, a.nudgeChannel],
  decodeReply: (raw): ConfigDeleteReply => {
    const { reply, status } = statusOf("journal-config-delete", raw)
    if (status === "ok" || status === "notfound") return { status }
    if (status === "wrongtype") return decodeWrongType("journal-config-delete", reply)
    throw new UnexpectedReply("journal-config-delete", raw)
  }
})

export const journalScripts = [journalInsert, journalRecall, journalExpire, counterExpire, counterRepair, journalRecount, journalUnindex, journalConfigPut, journalConfigDelete]
