import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect } from "effect"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import { correlationIdOf } from "@microdcs/sfc"
import { engineWorld, putJobOrder, putWorkMaster } from "./RuntimeFixtures.js"
import { executionOf, jobOrderFor, linearRecipe, observer, push, recipeWorkMaster, responseSummary, SCOPE, startInstance, untilResponse } from "./RuntimeKit.js"

const ROOT = fileURLToPath(new URL("../../../", import.meta.url))

/** Starts packages/sfc-runtime/test/CrashAfterCas.ts under tsx; `exited` settles with its signal. */
const spawnDoomedEngine = (prefix: string, consumer: string) =>
  Effect.acquireRelease(
    Effect.gen(function* () {
      const ready = yield* Deferred.make<void>()
      const exited = yield* Deferred.make<string | null>()
      const child = spawn(process.execPath, ["--import", "tsx/esm", "--conditions=source", "packages/sfc-runtime/test/CrashAfterCas.ts"], {
        cwd: ROOT,
        env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", VALKEY_URL: inject("valkeyUrl"), PREFIX: prefix, CONSUMER: consumer },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let output = ""
      child.stdout.on("data", (chunk: Buffer) => {
        output += chunk.toString()
        if (/^ready$/m.test(output)) Deferred.doneUnsafe(ready, Effect.void)
      })
      child.stderr.on("data", (chunk: Buffer) => void (output += chunk.toString()))
      child.on("exit", (_code, signal) => Deferred.doneUnsafe(exited, Effect.succeed(signal)))
      return { child, ready, exited, output: () => output }
    }),
    ({ child }) => Effect.sync(() => void (child.exitCode === null && child.signalCode === null && child.kill("SIGKILL")))
  )

describe("SFC runtime: a crash between the CAS and the direct send", () => {
  it.live(
    "is healed through the outbox entry: another instance sends the command, with the same correlation id, on its first attempt",
    () => {
      const prefix = randomPrefix("sfc-crash")
      const survivor = engineWorld({ onCommand: (c) => ({ data: { done: c.action } }) }, { prefix, engine: { consumer: "survivor" } })
      // A deadline far beyond the recovery: the command reaches the station through the outbox, not a resend.
      const recipe = linearRecipe(["Fit", "Tighten"], [push("fit", "Fit", { TimeoutSeconds: 120 }), push("tighten", "Tighten")])
      return Effect.gen(function* () {
        const doomed = yield* spawnDoomedEngine(prefix, "doomed")
        yield* Deferred.await(doomed.ready).pipe(
          Effect.timeoutOrElse({ duration: "40 seconds", orElse: () => Effect.fail(new Error(`the child never started: ${doomed.output()}`)) })
        )
        yield* putWorkMaster(SCOPE, recipeWorkMaster("wm-crash", recipe))
        yield* putJobOrder(SCOPE, jobOrderFor("jo-crash", "wm-crash"))
        const signal = yield* Deferred.await(doomed.exited).pipe(
          Effect.timeoutOrElse({ duration: "40 seconds", orElse: () => Effect.fail(new Error(`the child never sent: ${doomed.output()}`)) })
        )
        expect(signal).toBe("SIGKILL")
        // The CAS landed before the kill: the state waits for the command the station never got.
        const written = yield* executionOf("jo-crash")
        const fit = written?.state.actions.find((a) => a.action === "fit")
        expect(fit).toMatchObject({ state: "dispatched", attempts: 1, correlationId: correlationIdOf("jo-crash", "fit", 1) })
        expect(doomed.output()).toContain(`dying before sending ${fit!.correlationId}`)

        yield* startInstance(survivor.layer)
        expect(responseSummary(yield* untilResponse("jo-crash", 20_000))).toMatchObject({ state: "Ended_Completed", data: { fit: { done: "fit" } } })
        const sentFit = survivor.station.commands.filter((c) => c.action === "fit")
        expect(sentFit.map((c) => [c.correlationId, c.attempt])).toEqual([[fit!.correlationId, 1]])
      }).pipe(Effect.provide(observer(prefix)), Effect.scoped)
    },
    90_000
  )
})
