import { Effect, type Scope, Context, Layer } from "effect"
import type { KeyParts } from "@microdcs/keyschema"
import { type ConnectionError, type InvalidInput, StoreUnavailable } from "./Errors.js"
import { Valkey } from "./Valkey.js"
import { command, dedicated } from "./RawDoor.js"

export interface NudgeHandlers {
  /** A nudge naming `scope` arrived. Runs on the connection's event loop: keep it short (offer to a queue). */
  readonly onNudge: (scope: string) => void
  /**
   * The connection came back after a loss and resubscribed. Nudges sent meanwhile are lost:
   * read everything that may have changed.
   */
  readonly onReconnect?: (() => void) | undefined
}

/**
 * Nudges (`nudge:{kind}` channels): the wake-ups the store's scripts publish
 * with the scope they changed. Only wake-ups, never the truth: pub/sub loses messages across
 * reconnects, so a listener also reads on a timer.
 */
export class Nudges extends Context.Service<Nudges>()("@microdcs/store/Nudges", {
  make: Effect.gen(function* () {
    const valkey = yield* Valkey

    /**
     * Subscribes to `nudge:{kind}` on a connection of its own (named `connectionName`), open
     * until the scope closes. It returns once subscribed, so a change made after it returns is
     * nudged, not missed.
     */
    const listen = (
      kind: KeyParts<"nudge">["kind"],
      connectionName: string,
      handlers: NudgeHandlers
    ): Effect.Effect<void, InvalidInput | StoreUnavailable, Scope.Scope> =>
      Effect.gen(function* () {
        const channel = yield* valkey.key("nudge", { kind })
        // No command timeout: a subscribed connection sends nothing for as long as nobody writes.
        const subscriber = yield* dedicated(valkey, connectionName, { commandTimeoutMs: undefined })
        subscriber.on("message", (from: string, scope: string) => {
          if (from === channel) handlers.onNudge(scope)
        })
        // After a reconnect the client resubscribes by itself; "ready" is not emitted before,
        // because the connection is ready when `dedicated` returns.
        const onReconnect = handlers.onReconnect
        subscriber.on("ready", () => {
          // A failure here is the connection going away again; the next "ready" tries again.
          subscriber.subscribe(channel).catch(() => undefined)
          onReconnect?.()
        })
        yield* Effect.tryPromise({
          try: () => subscriber.subscribe(channel),
          catch: (error) => new StoreUnavailable({ operation: `SUBSCRIBE ${channel}`, message: error instanceof Error ? error.message : String(error) })
        })
      })

    /**
     * Publishes a nudge naming `scope` on `nudge:{kind}`: the listeners read now instead of at
     * their next poll (a writer that appended without nudging, then found the entry needs them).
     */
    const nudge = (kind: KeyParts<"nudge">["kind"], scope: string): Effect.Effect<void, InvalidInput | ConnectionError> =>
      Effect.flatMap(valkey.key("nudge", { kind }), (channel) => command(valkey, `PUBLISH ${channel}`, (c) => c.publish(channel, scope))).pipe(Effect.asVoid)

    return { listen, nudge } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
