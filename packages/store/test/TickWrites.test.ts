import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { inject } from "vitest"
import { eventually, randomPrefix, respCommand } from "@microdcs/test-utils"
import { ValkeyLayer } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"

/**
 * The shared command connection never holds a command back until earlier ones are answered
 * (iovalkey's auto-pipelining did: one pipeline in flight, the next queued behind its replies,
 * so the server and this process took turns instead of working at once).
 */

const url = new URL(inject("valkeyUrl"))
const host = url.hostname
const port = Number(url.port)

/** The fields of this connection's line in CLIENT LIST, found by its name. */
const clientLine = (name: string) =>
  Effect.promise(async () => {
    const list = String(await respCommand(host, port, ["CLIENT", "LIST"]))
    const line = list.split("\n").find((l) => l.includes(` name=${name} `))
    if (line === undefined) return undefined
    return Object.fromEntries(line.trim().split(" ").map((field) => field.split("=", 2) as [string, string]))
  })

describe("the shared connection's writes", () => {
  it.live("a command issued while an earlier one waits for its reply reaches the server at once", () =>
    Effect.gen(function* () {
      const name = randomPrefix("tick-writes")
      const valkey = yield* ValkeyLayer.makeValkey({ url: url.href, prefix: randomPrefix(), connectionName: name })
      const list = yield* valkey.key("nudge", { kind: "tick-writes-test" })
      // The first command blocks on the server until the list gets an element.
      const blocked = yield* Effect.forkChild(unsafeCommand(valkey, "block", (c) => c.blpop(list, 4)))
      yield* eventually(Effect.map(clientLine(name), (fields) => (fields?.["cmd"] === "blpop" ? fields : undefined)), { what: "the BLPOP is blocked" })
      // A later command: sent at once, it waits unread in the server's query buffer of the connection.
      const later = yield* Effect.forkChild(unsafeCommand(valkey, "ping", (c) => c.ping()))
      const waiting = yield* eventually(
        Effect.map(clientLine(name), (fields) => (fields !== undefined && Number(fields["qbuf"]) > 0 ? fields : undefined)),
        { what: "the PING is in the server's query buffer while the BLPOP blocks" }
      )
      expect(waiting["cmd"]).toBe("blpop")
      yield* Effect.promise(() => respCommand(host, port, ["LPUSH", list, "go"]))
      expect(yield* Fiber.join(blocked)).toEqual([list, "go"])
      expect(yield* Fiber.join(later)).toBe("PONG")
    }).pipe(Effect.scoped)
  )

  it.live("many fibers' commands in one tick all go out and keep their order per fiber", () =>
    Effect.gen(function* () {
      const valkey = yield* ValkeyLayer.makeValkey({ url: url.href, prefix: randomPrefix() })
      const keys = yield* Effect.forEach(Array.from({ length: 50 }, (_, i) => `c-${i}`), (id) => valkey.key("jobOrder", { id }))
      // Each fiber sends INCR twice per step, ten steps: every reply must follow its own count.
      const counts = yield* Effect.forEach(
        keys,
        (key) =>
          Effect.forEach(Array.from({ length: 10 }, (_, step) => step), () =>
            unsafeCommand(valkey, "incr twice", (c) => Promise.all([c.incr(key), c.incr(key)]))
          ),
        { concurrency: "unbounded" }
      )
      for (const perFiber of counts) expect(perFiber.flat()).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
    }).pipe(Effect.scoped)
  )
})
