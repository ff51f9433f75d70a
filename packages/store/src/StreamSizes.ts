import { Effect } from "effect"
import type { KeyFamily, KeyParts } from "@microdcs/keyschema"
import { trimStream } from "@microdcs/lua-scripts"
import { type ConnectionError, WrongType } from "./Errors.js"
import { runStream } from "./StreamCommand.js"
import { typedCommand } from "./TypeGuard.js"
import type { ValkeyService } from "./Valkey.js"

/** Key families whose only part is the scope (`changes:{scope}`, `sfc:work:{scope}`): one stream per scope. */
export type ScopedFamily = {
  [F in KeyFamily]: KeyParts<F> extends { readonly scope: string } ? (keyof KeyParts<F> extends "scope" ? F : never) : never
}[KeyFamily]

export interface ScopeStreamLength {
  readonly scope: string
  readonly stream: string
  /** Entries in the stream; 0 when it does not exist. */
  readonly length: number
}

/**
 * Removes entries below the oldest one that some group still needs (its oldest pending id, or
 * what follows its last-delivered id), computed and applied in one script. A stream without
 * groups is left alone. `threshold` is null when nothing could be trimmed.
 */
export const trim = (
  valkey: ValkeyService,
  stream: string
): Effect.Effect<{ readonly removed: number; readonly threshold: string | null }, WrongType | ConnectionError> =>
  Effect.gen(function* () {
    const reply = yield* valkey.script(trimStream, { stream }, undefined)
    switch (reply.status) {
      case "ok":
        return { removed: reply.removed, threshold: reply.threshold }
      case "wrongtype":
        return yield* new WrongType({ key: reply.key, expected: reply.expected, actual: reply.actual })
      default:
        return { removed: 0, threshold: null }
    }
  })

/** XLEN of each stream (0 for a missing one), in one round trip. */
export const lengths = (valkey: ValkeyService, streamKeys: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<number>, WrongType | ConnectionError> =>
  streamKeys.length === 0
    ? Effect.succeed([])
    : runStream(valkey, "XLEN", streamKeys, (c) => Promise.all(streamKeys.map((k) => c.xlen(k)))).pipe(
        // XLEN has no group to miss: a NOGROUP reply would be a bug.
        Effect.catchTag("NotFound", (e) => Effect.die(e))
      )

/**
 * The length of `family`'s stream in every registered scope (the `scopes` set), sorted by
 * scope: SMEMBERS plus one pipelined XLEN per scope, cheap enough for every metrics scrape.
 */
export const lengthPerScope = (valkey: ValkeyService, family: ScopedFamily): Effect.Effect<ReadonlyArray<ScopeStreamLength>, WrongType | ConnectionError> =>
  Effect.gen(function* () {
    const scopesKey = yield* Effect.orDie(valkey.key("scopes", {}))
    const scopes = yield* typedCommand(valkey, "SMEMBERS scopes", scopesKey, "set", (c) => c.smembers(scopesKey))
    const rows: Array<{ readonly scope: string; readonly stream: string }> = []
    for (const scope of scopes.sort()) {
      // A registered scope that is no valid key part can hold no stream; it is left out.
      const stream = valkey.keys.key(family, { scope } as KeyParts<typeof family>)
      if (typeof stream === "string") rows.push({ scope, stream })
    }
    const counts = yield* lengths(valkey, rows.map((r) => r.stream))
    return rows.map((r, i) => ({ ...r, length: counts[i]! }))
  })
