import { cpSync, mkdtempSync, renameSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { KeyFamilyError, KeyPartError, makeKeySchema } from "@microdcs/keyschema"
import { keySchemaLawProblems } from "@microdcs/keyschema/testing"
import { defineScript, scriptHeaderProblems } from "@microdcs/lua-scripts"
import { Valkey } from "@microdcs/store"
import { putTicket, ticketKeys, ticketScripts, ticketStatuses } from "../src/index.js"
import { ticketIsland } from "./Island.js"

const schema = (prefix?: string) => {
  const core = makeKeySchema(prefix)
  if (core instanceof KeyPartError) throw new Error(core.message)
  const keys = core.extend(ticketKeys)
  if (keys instanceof KeyFamilyError) throw new Error(keys.message)
  return keys
}

describe("the ticket key families", () => {
  it("keep the key laws beside the core families: every draw builds a key that parses back, no two share one", () => {
    expect(keySchemaLawProblems(schema())).toEqual([])
  })

  it("the status part takes only a ticket status", () => {
    const keys = schema()
    for (const status of ticketStatuses) expect(keys.key("ticketByStatus", { scope: "s", status })).toBe(`microdcs:ticket:bystatus:s:${status}`)
    expect(keys.key("ticketByStatus", { scope: "s", status: "lost" })).toMatchObject({ _tag: "KeyPartError", problem: "not-allowed", name: "status" })
  })

  it("registering them twice is refused with a KeyFamilyError (nothing thrown)", () => {
    const twice = schema().extend(ticketKeys)
    expect(twice).toBeInstanceOf(KeyFamilyError)
    expect((twice as KeyFamilyError).message).toMatch(/ticket/)
  })

  it.effect("round-trip through the island's parser (valkey.keys), with the test's prefix", () =>
    Effect.gen(function* () {
      const valkey = yield* Valkey
      const keys = valkey.keys.extend(ticketKeys)
      if (keys instanceof KeyFamilyError) return yield* Effect.die(keys)
      const cases = [
        { family: "ticket", parts: { id: "pump:7|a%b" } },
        { family: "ticketList", parts: { scope: "line 1" } },
        { family: "ticketByStatus", parts: { scope: "press-1", status: "assigned" } }
      ] as const
      for (const { family, parts } of cases) {
        const key = keys.key(family, parts as never)
        expect(typeof key).toBe("string")
        expect((key as string).startsWith(`${valkey.keys.prefix}:ticket:`)).toBe(true)
        expect(keys.parse(key as string)).toEqual({ family, parts })
      }
      // The core schema alone does not know them.
      expect(valkey.keys.parse(keys.key("ticket", { id: "t1" }) as string)).toBeUndefined()
    }).pipe(Effect.provide(ticketIsland()))
  )
})

describe("the ticket scripts", () => {
  const work = mkdtempSync(join(tmpdir(), "tickets-lua-"))
  afterAll(() => rmSync(work, { recursive: true, force: true }))

  it("hold the header rules of the core scripts, with their includes spliced", () => {
    for (const script of ticketScripts) {
      expect(scriptHeaderProblems(script), script.file).toEqual([])
      expect(script.source).toContain("local function wrongType(") // lib/check-types.lua, from the core library
    }
    expect(putTicket.source).toContain("local function checkTicketStatus(") // ./lib/ticket-precondition.lua, the ticket's own
  })

  it("a copy whose header leaves out an argument it uses fails the check", () => {
    const lying = { ...putTicket, source: putTicket.source.replace("  ARGV[10] severity\n", "") }
    expect(scriptHeaderProblems(lying)).toEqual(["put-ticket-6.lua: ARGV[10] is used but not documented in the header"])
  })

  it("a copy named with a lying key count fails the check", () => {
    const dir = join(work, "lua")
    cpSync(new URL("../lua/", import.meta.url), dir, { recursive: true })
    renameSync(join(dir, "put-ticket-6.lua"), join(dir, "put-ticket-5.lua"))
    const short = defineScript({
      file: "put-ticket-5.lua",
      dir: pathToFileURL(`${dir}/`),
      keys: ["doc", "list", "status", "oldStatus", "scopes"],
      encodeArgs: () => [],
      decodeReply: (raw) => raw
    })
    expect(scriptHeaderProblems(short)).toEqual(["put-ticket-5.lua: KEYS[6] is past the key count 5 of its file name"])
    // And defineScript refuses key names that disagree with the count in the name.
    expect(() => defineScript({ file: "put-ticket-5.lua", dir: pathToFileURL(`${dir}/`), keys: ["doc"], encodeArgs: () => [], decodeReply: (raw) => raw })).toThrow(
      /declares 5 keys in its name but 1 key names/
    )
  })
})
