import { createHash } from "node:crypto"
import { Effect, Option, Context, Layer } from "effect"
import { type ConnectionError, InvalidInput, type WrongType } from "./Errors.js"
import { validateDocument } from "./DocumentInput.js"
import { typedCommand } from "./TypeGuard.js"
import { Valkey } from "./Valkey.js"
import { command } from "./RawDoor.js"

/** The digest of a recipe text: SHA-256, 64 lower-case hex characters. */
export const recipeDigestOf = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex")

const DIGEST = /^[0-9a-f]{64}$/

const checkDigest = (digest: string): Effect.Effect<void, InvalidInput> =>
  DIGEST.test(digest)
    ? Effect.void
    : Effect.fail(new InvalidInput({ field: "digest", message: "a recipe digest is 64 lower-case hex characters (SHA-256)" }))

/**
 * Recipes of running executions (`sfc:recipe:{digest}`), stored once by the SHA-256 of their
 * text and never changed: every execution state of a recipe names its digest instead of
 * carrying a copy, so a work master changed or deleted mid-run leaves running jobs alone.
 * Written with `SET NX`; a second store of the same text is a no-op.
 */
export class SfcRecipes extends Context.Service<SfcRecipes>()("@microdcs/store/SfcRecipes", {
  make: Effect.gen(function* () {
    const valkey = yield* Valkey

    /** Stores the recipe text (JSON) unless a recipe of the same digest is there; returns the digest. */
    const store = (text: string): Effect.Effect<string, InvalidInput | ConnectionError> =>
      Effect.gen(function* () {
        yield* validateDocument("recipe", text, valkey.maxDocumentBytes)
        const digest = recipeDigestOf(text)
        const key = yield* valkey.key("sfcRecipe", { digest })
        yield* command(valkey, "store sfc recipe", (c) => c.set(key, text, "NX"))
        return digest
      })

    /** The recipe text stored under `digest`, or none. */
    const get = (digest: string): Effect.Effect<Option.Option<string>, InvalidInput | WrongType | ConnectionError> =>
      Effect.gen(function* () {
        yield* checkDigest(digest)
        const key = yield* valkey.key("sfcRecipe", { digest })
        return Option.fromNullishOr(yield* typedCommand(valkey, "read sfc recipe", key, "string", (c) => c.get(key)))
      })

    return { store, get } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
