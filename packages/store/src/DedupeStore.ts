import { Data, Effect } from "effect"
import { dedupeHash } from "@microdcs/keyschema"
import { dedupeClaim, dedupeDone, dedupeRelease } from "@microdcs/lua-scripts"
import { Busy, type ConnectionError, type InvalidInput, LeaseLost, type WrongType } from "./Errors.js"
import { validateDocument } from "./Document.js"
import { validatePositiveMs, validateText } from "./Input.js"
import { wrongTypeError } from "./TypeGuard.js"
import { Valkey } from "./Valkey.js"

/** What a claim found: the caller may process the event, or it was processed before. */
export type ClaimResult = Data.TaggedEnum<{
  /** The caller holds the lease. `alreadyHeld`: it held it before this call (the lease was not extended). */
  Claimed: { readonly key: string; readonly alreadyHeld: boolean }
  /** The event was processed; skip it. `reply`: what was kept with the done mark, if anything. */
  Done: { readonly key: string; readonly reply: string | undefined }
}>
export const ClaimResult = Data.taggedEnum<ClaimResult>()

/**
 * CloudEvent deduplication (data-layer.md §5, seed ): `ce:dedupe:{hash}` holds
 * `processing:{token}` while one consumer works on an event, then `done` for the done TTL, or
 * `done:{reply}` when the caller kept its reply with the mark (island.md §2), so a duplicate
 * can be answered the same way again.
 */
export class DedupeStore extends Effect.Service<DedupeStore>()("@microdcs/store/DedupeStore", {
  effect: Effect.gen(function* () {
    const valkey = yield* Valkey

    const dedupeKey = (source: string, id: string): Effect.Effect<string, InvalidInput> =>
      Effect.gen(function* () {
        yield* validateText("source", source)
        yield* validateText("id", id)
        return yield* valkey.key("dedupe", { hash: dedupeHash(source, id) })
      })

    /** Takes the lease on an event, or learns it is done; `Busy` while another token holds it. */
    const claim = (
      source: string,
      id: string,
      token: string,
      leaseMs: number
    ): Effect.Effect<ClaimResult, Busy | WrongType | InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        const key = yield* dedupeKey(source, id)
        yield* validateText("token", token)
        yield* validatePositiveMs("leaseMs", leaseMs)
        const reply = yield* valkey.script(dedupeClaim, { dedupe: key }, { token, leaseMs })
        switch (reply.status) {
          case "claimed":
            return ClaimResult.Claimed({ key, alreadyHeld: reply.alreadyHeld })
          case "done":
            return ClaimResult.Done({ key, reply: reply.reply ?? undefined })
          case "busy":
            return yield* new Busy({ key, remainingMs: reply.remainingMs })
          case "wrongtype":
            return yield* wrongTypeError(reply)
        }
      })

    /**
     * Marks the event processed for `ttlMs`, keeping `storedReply` (a JSON text, at most the
     * document size limit) with the mark for duplicates; `LeaseLost` when the caller no longer
     * holds the lease.
     */
    const markDone = (
      source: string,
      id: string,
      token: string,
      ttlMs: number,
      storedReply?: string
    ): Effect.Effect<void, LeaseLost | WrongType | InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        const key = yield* dedupeKey(source, id)
        yield* validateText("token", token)
        yield* validatePositiveMs("ttlMs", ttlMs)
        if (storedReply !== undefined) yield* validateDocument("reply", storedReply, valkey.maxDocumentBytes)
        const reply = yield* valkey.script(dedupeDone, { dedupe: key }, { token, ttlMs, reply: storedReply })
        if (reply.status === "wrongtype") return yield* wrongTypeError(reply)
        if (reply.status === "lost") {
          const done = reply.stored === "done" || reply.stored?.startsWith("done:") === true
          const now = reply.stored === null ? "the lease expired" : done ? "it is already done" : "another token holds it"
          return yield* new LeaseLost({ key, message: `token ${token} no longer holds ${key}: ${now}` })
        }
      })

    /** Gives the caller's own lease back (processing failed); `true` when it was deleted. */
    const release = (
      source: string,
      id: string,
      token: string
    ): Effect.Effect<boolean, WrongType | InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        const key = yield* dedupeKey(source, id)
        yield* validateText("token", token)
        const reply = yield* valkey.script(dedupeRelease, { dedupe: key }, { token })
        return reply.status === "ok" ? reply.released : yield* wrongTypeError(reply)
      })

    /** PTTL of whatever the key holds (lease or done), floored at 0: 0 when absent or without TTL. */
    const leaseRemaining = (source: string, id: string): Effect.Effect<number, InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        const key = yield* dedupeKey(source, id)
        // PTTL is -2 for a missing key and -1 for one without TTL; both mean "nothing to wait for".
        const ms = yield* valkey.command("dedupe lease remaining", (c) => c.pttl(key))
        return Math.max(0, ms)
      })

    return { claim, markDone, release, leaseRemaining } as const
  })
}) {}
