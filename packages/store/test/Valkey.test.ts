import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Exit, Schedule } from "effect"
import { inject } from "vitest"
import { defineScript } from "@microdcs/lua-scripts"
import { randomPrefix, startValkeyServer } from "@microdcs/test-utils"
import { Valkey, ValkeyLayer } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"

const services = ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix: randomPrefix() })

describe("Valkey", () => {
  it.effect("runs commands and builds prefixed keys", () =>
    Effect.gen(function* () {
      const valkey = yield* Valkey
      expect(yield* unsafeCommand(valkey, "ping", (c) => c.ping())).toBe("PONG")
      const key = yield* valkey.key("jobOrder", { id: "a:b" })
      expect(key).toBe(`${valkey.keys.prefix}:joborder:a%3Ab`)
    }).pipe(Effect.provide(services))
  )

  it.effect("rejects a bad key part as InvalidInput naming the part", () =>
    Effect.gen(function* () {
      const valkey = yield* Valkey
      const error = yield* Effect.flip(valkey.key("jobResponseByState", { scope: "s", state: "" }))
      expect(error).toMatchObject({ _tag: "InvalidInput", field: "state" })
    }).pipe(Effect.provide(services))
  )

  it.effect("fails to build with a prefix containing ':'", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(Effect.provide(Valkey, ValkeyLayer.layer({ url: inject("valkeyUrl"), prefix: "a:b" })))
      expect(Exit.isFailure(exit) && JSON.stringify(exit.cause)).toContain("InvalidInput")
    })
  )

  it.effect("rejects a malformed URL as InvalidInput instead of throwing", () =>
    Effect.gen(function* () {
      for (const url of ["not a url", "http://127.0.0.1:6379", "redis://127.0.0.1:6379/x"]) {
        const error = yield* Effect.flip(Effect.provide(Valkey, ValkeyLayer.layer({ url, prefix: randomPrefix() })))
        expect(error).toMatchObject({ _tag: "InvalidInput", field: "url" })
      }
    })
  )

  it.live("is StoreUnavailable when nothing listens", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        Effect.provide(Valkey, ValkeyLayer.layer({ url: "redis://127.0.0.1:1", prefix: randomPrefix(), connectTimeoutMs: 200 }))
      )
      expect(error._tag).toBe("StoreUnavailable")
    })
  )
})

/** The test echo script: replies `{key}={value}`. */
const echoScript = defineScript({
  file: "test/echo-1.lua",
  keys: ["target"],
  encodeArgs: (value: string) => [value],
  decodeReply: (raw) => raw as string
})

layer(services)("scripts", (it) => {
  it.effect("falls back to the source after SCRIPT FLUSH", () =>
    Effect.gen(function* () {
      const valkey = yield* Valkey
      expect(yield* valkey.script(echoScript, { target: "k" }, "one")).toBe("k=one")
      yield* unsafeCommand(valkey, "flush", (c) => c.script("FLUSH"))
      expect(yield* valkey.script(echoScript, { target: "k" }, "two")).toBe("k=two")
    })
  )

  it.effect("scriptWithBytes keeps a binary reply as the bytes sent, also after SCRIPT FLUSH; script decodes it as text", () =>
    Effect.gen(function* () {
      const valkey = yield* Valkey
      const bytesEcho = defineScript({ file: "test/echo-1.lua", keys: ["target"], encodeArgs: (value: Buffer) => [value], decodeReply: (raw) => raw })
      // Not UTF-8: a text reply would turn these into replacement characters.
      const binary = Buffer.from([0xff, 0x00, 0xc3, 0x28, 0x80])
      const expected = Buffer.concat([Buffer.from("k="), binary])
      expect(yield* valkey.scriptWithBytes(bytesEcho, { target: "k" }, binary)).toEqual(expected)
      yield* unsafeCommand(valkey, "flush", (c) => c.script("FLUSH"))
      expect(yield* valkey.scriptWithBytes(bytesEcho, { target: "k" }, binary)).toEqual(expected)
      expect(yield* valkey.script(bytesEcho, { target: "k" }, binary)).not.toEqual(expected)
    })
  )

  it.effect("scriptMany runs each call and answers in order; no calls is no results", () =>
    Effect.gen(function* () {
      const valkey = yield* Valkey
      expect(yield* valkey.scriptMany(echoScript, [])).toEqual([])
      const calls = ["a", "b", "c"].map((value) => ({ keys: { target: `k${value}` }, args: value }))
      expect(yield* valkey.scriptMany(echoScript, calls)).toEqual(["ka=a", "kb=b", "kc=c"].map((reply) => ({ _tag: "Reply", reply })))
    })
  )
})

describe("reconnect", () => {
  it.live("reconnects after the server restarts on the same port", () =>
    Effect.gen(function* () {
      const server = yield* Effect.promise(() => startValkeyServer())
      yield* Effect.addFinalizer(() => Effect.promise(() => server.stop()))
      const valkey = yield* ValkeyLayer.makeValkey({ url: server.url, prefix: randomPrefix(), unavailableRetries: 2 })
      expect(yield* unsafeCommand(valkey, "ping", (c) => c.ping())).toBe("PONG")
      yield* Effect.promise(() => server.stop())
      const down = yield* Effect.flip(unsafeCommand(valkey, "ping", (c) => c.ping()).pipe(Effect.retry({ times: 0 })))
      expect(["StoreUnavailable", "UnknownOutcome"]).toContain(down._tag)
      const again = yield* Effect.promise(() => startValkeyServer({ port: server.port }))
      yield* Effect.addFinalizer(() => Effect.promise(() => again.stop()))
      // The client reconnects by itself; the caller only retries what was never sent.
      const pong = yield* unsafeCommand(valkey, "ping", (c) => c.ping()).pipe(
        Effect.retry({ while: (e) => e._tag === "StoreUnavailable", schedule: Schedule.spaced("50 millis"), times: 100 })
      )
      expect(pong).toBe("PONG")
    }).pipe(Effect.scoped)
  )
})
