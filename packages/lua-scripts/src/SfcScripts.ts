import { asArray, asText } from "./Reply.js"
import { decodeCasOk, type SfcCasOk } from "./SfcCasReply.js"
import { defineScript } from "./ScriptDescriptor.js"
import { keyedWaitKeys, type SfcKeyedWaitArgs } from "./SfcKeyedWaitArgs.js"
import { decodeWriteReply, type WriteReply } from "./WriteReply.js"

export type { SfcCasOk, SfcKeyedWaitArgs }

/** One stream entry as XADD field/value pairs, in order. */
export type SfcEntryPairs = ReadonlyArray<readonly [field: string, value: string]>

export interface SfcCompareAndSetArgs {
  /** 0 = create only, n > 0 = must equal the stored version. */
  readonly expectedVersion: number
  readonly scope: string
  readonly jobId: string
  readonly op: string
  readonly doc: string
  /** Next deadline in epoch ms; `null` takes the job out of the due index. */
  readonly due: number | null
  readonly active: boolean
  /** Published with the scope when entries were appended; `""` = no nudge. */
  readonly nudgeChannel: string
  /** The applied-event key this write records, with its lifetime; `null` = no event. */
  readonly event: { readonly key: string; readonly lifetimeMs: number } | null
  /** Waits sets the job joins, each with its wait start (kept if the job is already in it). */
  readonly waitsJoin: ReadonlyArray<{ readonly key: string; readonly since: number }>
  /**
   * Waits sets the job stays in with a new wait start (its earlier wait for the type ended and a
   * later one is open): the start is replaced, so the job queues behind jobs that waited longer.
   * Default none.
   */
  readonly waitsMove?: ReadonlyArray<{ readonly key: string; readonly since: number }> | undefined
  /** Waits sets the job leaves. */
  readonly waitsLeave: ReadonlyArray<string>
  /**
   * Keyed waits the job joins (waits by correlation key, `lib/sfc-keyed-waits.lua`), each with its
   * start, kept if the job is already in it; with `move`, the start replaces the stored one (its
   * earlier wait ended and a later one is open). Default none.
   */
  readonly keyedJoin?: ReadonlyArray<SfcKeyedWaitArgs & { readonly since: number; readonly move?: boolean | undefined }> | undefined
  /** Keyed waits the job leaves. Default none. */
  readonly keyedLeave?: ReadonlyArray<SfcKeyedWaitArgs> | undefined
  /** Work and outbox entries appended to `sfc:work:{scope}`, in order. */
  readonly entries: ReadonlyArray<SfcEntryPairs>
  /**
   * The trailer of a direct send (the writer sends its commands itself): correlation pointer keys
   * set to the job id with a lifetime, and the job order key whose version and `doc` the reply
   * carries, read after the write. Default none (the script's arguments are then exactly as without it).
   */
  readonly directSend?: {
    readonly pointerKeys: ReadonlyArray<string>
    readonly pointerLifetimeMs: number
    readonly jobOrderKey: string | null
    /**
     * The job order version the writer holds (default none): when the job order is still at
     * it, the reply leaves its `doc` out.
     */
    readonly heldJobOrderVersion?: number | undefined
  } | undefined
}

export type SfcCompareAndSetReply =
  | SfcCasOk
  | { readonly status: "duplicate"; readonly jobId: string }
  | Extract<WriteReply, { readonly status: "conflict" | "scope" | "wrongtype" }>

const casName = "sfc-cas"

/** The trailer of a direct send: pointer count and lifetime, R, and with R the held job order version. */
const directSendArgs = (d: NonNullable<SfcCompareAndSetArgs["directSend"]>): ReadonlyArray<string | number> =>
  d.jobOrderKey === null ? [d.pointerKeys.length, d.pointerLifetimeMs, "0"] : [d.pointerKeys.length, d.pointerLifetimeMs, "1", d.heldJobOrderVersion ?? 0]
const decodeFailure = decodeWriteReply(casName, ["conflict", "scope", "wrongtype"])

const decodeCompareAndSet = (raw: unknown): SfcCompareAndSetReply => {
  const reply = asArray(casName, raw)
  const status = asText(casName, reply[0])
  if (status === "ok") return decodeCasOk(casName, reply)
  if (status === "duplicate") return { status, jobId: asText(casName, reply[1]) }
  return decodeFailure(raw)
}

/**
 * The one write of SFC execution state: compare the version, store the state,
 * append entries, maintain due, active and waits, record the applied event, nudge. KEYS are the
 * four named keys, then the tail: the event key (if any), the joined, the moved and the left
 * waits sets, the joined and the left keyed waits (two keys each), then with `directSend` the
 * correlation pointers and the job order key (if any).
 */
export const sfcCompareAndSet = defineScript({
  file: "sfc-cas-4+.lua",
  keys: ["state", "work", "due", "active"],
  tailKeys: (a: SfcCompareAndSetArgs) => [
    ...(a.event ? [a.event.key] : []),
    ...a.waitsJoin.map((w) => w.key),
    ...(a.waitsMove ?? []).map((w) => w.key),
    ...a.waitsLeave,
    ...keyedWaitKeys(a.keyedJoin),
    ...keyedWaitKeys(a.keyedLeave),
    ...(a.directSend ? [...a.directSend.pointerKeys, ...(a.directSend.jobOrderKey !== null ? [a.directSend.jobOrderKey] : [])] : [])
  ],
  encodeArgs: (a: SfcCompareAndSetArgs) => [
    a.expectedVersion,
    a.scope,
    a.jobId,
    a.op,
    a.doc,
    a.due === null ? "" : a.due,
    a.active ? "1" : "0",
    a.nudgeChannel,
    a.event ? "1" : "0",
    a.waitsJoin.length,
    (a.waitsMove ?? []).length,
    a.waitsLeave.length,
    a.event ? a.event.lifetimeMs : 0,
    (a.keyedJoin ?? []).length,
    (a.keyedLeave ?? []).length,
    ...a.waitsJoin.map((w) => w.since),
    ...(a.waitsMove ?? []).map((w) => w.since),
    ...(a.keyedJoin ?? []).flatMap((w) => [w.place, w.since, w.move === true ? "1" : "0"]),
    ...(a.keyedLeave ?? []).map((w) => w.place),
    a.entries.length,
    ...a.entries.flatMap((pairs) => [pairs.length * 2, ...pairs.flat()]),
    ...(a.directSend ? directSendArgs(a.directSend) : [])
  ],
  decodeReply: decodeCompareAndSet
})

export interface SfcDeleteArgs {
  /** -1 = unconditional, n > 0 = must equal the stored version. */
  readonly expectedVersion: number
  /** The scope the caller read; the script replies `retry` if it is no longer the stored one. */
  readonly scope: string
  readonly jobId: string
  /** Every waits set the job may be in. */
  readonly waits: ReadonlyArray<string>
  /** Every keyed wait the job may be in (default none). */
  readonly keyed?: ReadonlyArray<SfcKeyedWaitArgs> | undefined
}

/** Deletes the state and its due, active, named waits and keyed waits entries (Clear). */
export const sfcDelete = defineScript({
  file: "sfc-delete-3+.lua",
  keys: ["state", "due", "active"],
  tailKeys: (a: SfcDeleteArgs) => [...a.waits, ...keyedWaitKeys(a.keyed)],
  encodeArgs: (a: SfcDeleteArgs) => [a.expectedVersion, a.scope, a.jobId, (a.keyed ?? []).length, ...(a.keyed ?? []).map((w) => w.place)],
  decodeReply: decodeWriteReply("sfc-delete", ["ok", "notfound", "conflict", "retry", "wrongtype"])
})
