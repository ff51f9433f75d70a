import { describe, expect, it } from "vitest"
import * as scripts from "@microdcs/lua-scripts"
import { defineScript, readLua, type ScriptDescriptor } from "@microdcs/lua-scripts"

const isDescriptor = (value: unknown): value is ScriptDescriptor<string, unknown, unknown> =>
  typeof value === "object" && value !== null && "sha1" in value && "keyNames" in value

const descriptors = Object.entries(scripts as Record<string, unknown>).flatMap(([name, value]) =>
  isDescriptor(value) ? [[name, value] as const] : []
)

/** The comment block a script opens with, and the code after it. */
const split = (source: string) => {
  const match = /^--\[\[([\s\S]*?)\]\]/.exec(source)
  return { header: match?.[1] ?? "", body: source.slice(match?.[0].length ?? 0) }
}

describe("script files", () => {
  it("are all declared", () => {
    expect(descriptors.length).toBeGreaterThan(0)
  })

  for (const [name, script] of descriptors) {
    describe(`${name} (${script.file})`, () => {
      const { header, body } = split(readLua(script.file))

      it("opens with a header that lists every KEYS entry, ARGV entry used and the replies", () => {
        expect(header, "header comment").not.toBe("")
        for (let i = 1; i <= script.numberOfKeys; i++) expect(header).toContain(`KEYS[${i}]`)
        for (const used of new Set([...body.matchAll(/ARGV\[(\d+)\]/g)].map((m) => Number(m[1])))) {
          expect(header, `ARGV[${used}] documented`).toContain(`ARGV[${used}]`)
        }
        expect(header).toMatch(/Repl(y|ies)/)
      })

      it("never uses a KEYS index beyond its key count", () => {
        for (const m of body.matchAll(/KEYS\[(\d+)\]/g)) expect(Number(m[1])).toBeLessThanOrEqual(script.numberOfKeys)
      })

      it("has a stable SHA1 over the spliced source", () => {
        expect(script.sha1).toMatch(/^[0-9a-f]{40}$/)
        expect(script.source).not.toContain("@include")
      })
    })
  }
})

describe("defineScript", () => {
  it("refuses a key count that differs from the file name", () => {
    expect(() =>
      defineScript({ file: "test/echo-1.lua", keys: ["a", "b"], encodeArgs: () => [], decodeReply: (r) => r })
    ).toThrow(/declares 1 keys/)
  })
})
