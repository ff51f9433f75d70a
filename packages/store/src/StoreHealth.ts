import { Effect, Context, Layer } from "effect"
import type { ConnectionError } from "./Errors.js"
import { Valkey } from "./Valkey.js"
import { command } from "./RawDoor.js"

/** Whether the island's Valkey answers (readiness). Touches no key. */
export class StoreHealth extends Context.Service<StoreHealth>()("@microdcs/store/StoreHealth", {
  make: Effect.gen(function* () {
    const valkey = yield* Valkey

    /** One PING on the shared connection: fails as any command would when the server is away. */
    const ping: Effect.Effect<void, ConnectionError> = command(valkey, "ping", (c) => c.ping()).pipe(Effect.asVoid)

    return { ping } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
