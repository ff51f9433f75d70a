import { Context, Effect, Exit, Layer, Scope } from "effect"

/**
 * Runs a scoped effect in a scope of its own, so a test can stop what it started in the middle
 * (as a process exit would) and start another. `stop` closes it; the test's scope closes it too.
 */
export const startScoped = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    const value = yield* effect.pipe(Scope.provide(scope))
    return { value, stop: Scope.close(scope, Exit.void) }
  })

/**
 * Builds a layer in a scope of its own (see `startScoped`); `context` holds what it provides. The
 * layer is built fresh: Effect 4 would otherwise reuse services an enclosing `Effect.provide`
 * already built, and two "instances" would share one memory.
 */
export const startInstance = <ROut, E, RIn>(layer: Layer.Layer<ROut, E, RIn>) =>
  Effect.map(startScoped(Layer.build(Layer.fresh(layer))), ({ value, stop }) => ({ context: value as Context.Context<ROut>, stop }))
