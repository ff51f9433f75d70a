import { Effect } from "effect"
import { ScopeRegistry, Valkey } from "@microdcs/store"

/**
 * Reads of the island's streams for `streams info` and `streams pending`. Per scope there are
 * two: `changes:{scope}` (the change log the publisher and the engine follow) and
 * `sfc:work:{scope}` (the engine's work queue). They are named by their dead-letter kind.
 */
export const streamKinds = ["changes", "sfc"] as const
export type StreamKind = (typeof streamKinds)[number]

export interface GroupInfo {
  readonly group: string
  readonly consumers: number
  readonly pending: number
  readonly lastDeliveredId: string
  /** Entries the group has not read yet; `null` when the server cannot tell (after a trim or XDEL). */
  readonly lag: number | null
}

export interface StreamInfo {
  readonly scope: string
  readonly kind: StreamKind
  readonly key: string
  /** `stream`, `none` (not created yet) or the wrong type a corrupted key holds. */
  readonly type: string
  readonly length: number
  readonly firstId: string | null
  readonly lastId: string | null
  readonly groups: ReadonlyArray<GroupInfo>
}

export const streamKey = (kind: StreamKind, scope: string) =>
  Effect.flatMap(Valkey, (valkey) => valkey.key(kind === "changes" ? "changes" : "sfcWork", { scope }))

const field = (flat: ReadonlyArray<unknown>, name: string): unknown => {
  const at = flat.indexOf(name)
  return at >= 0 ? flat[at + 1] : undefined
}

const numberOrNull = (value: unknown): number | null => (value === null || value === undefined ? null : Number(value))

const decodeGroups = (raw: unknown): ReadonlyArray<GroupInfo> =>
  (Array.isArray(raw) ? raw : []).map((entry: ReadonlyArray<unknown>) => ({
    group: String(field(entry, "name")),
    consumers: Number(field(entry, "consumers") ?? 0),
    pending: Number(field(entry, "pending") ?? 0),
    lastDeliveredId: String(field(entry, "last-delivered-id") ?? "0-0"),
    lag: numberOrNull(field(entry, "lag"))
  }))

type RawEntries = ReadonlyArray<readonly [string, unknown]>

/**
 * One pipelined round trip. TYPE decides how to read the rest: on a missing key or one of
 * another type the stream commands fail, and those failures are expected, not errors.
 */
export const streamInfo = (kind: StreamKind, scope: string) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const key = yield* streamKey(kind, scope)
    const replies = yield* valkey.command("stream info", async (c) => {
      const pipeline = c.pipeline().type(key).xlen(key).call("XINFO", "GROUPS", key).xrange(key, "-", "+", "COUNT", 1).xrevrange(key, "+", "-", "COUNT", 1)
      return (await pipeline.exec()) ?? []
    })
    const reply = (i: number): unknown => (replies[i]?.[0] ? undefined : replies[i]?.[1])
    const type = String(reply(0) ?? "none")
    if (type !== "stream") return { scope, kind, key, type, length: 0, firstId: null, lastId: null, groups: [] } satisfies StreamInfo
    return {
      scope,
      kind,
      key,
      type,
      length: Number(reply(1) ?? 0),
      firstId: (reply(3) as RawEntries | undefined)?.[0]?.[0] ?? null,
      lastId: (reply(4) as RawEntries | undefined)?.[0]?.[0] ?? null,
      groups: decodeGroups(reply(2))
    } satisfies StreamInfo
  })

/** The scope given, or every registered scope. */
export const scopesOrAll = (scope: string | undefined) =>
  scope !== undefined ? Effect.succeed([scope]) : Effect.flatMap(ScopeRegistry, (registry) => registry.list)
