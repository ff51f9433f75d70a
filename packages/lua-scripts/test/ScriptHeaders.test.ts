import { readdirSync } from "node:fs"
import { describe, expect, it } from "vitest"
import * as scripts from "@microdcs/lua-scripts"
import { defineScript, type ScriptDescriptor, ScriptIncludeError, scriptHeaderProblems } from "@microdcs/lua-scripts"

const isDescriptor = (value: unknown): value is ScriptDescriptor<string, unknown, unknown> =>
  typeof value === "object" && value !== null && "sha1" in value && "keyNames" in value

const descriptors = Object.entries(scripts as Record<string, unknown>).flatMap(([name, value]) =>
  isDescriptor(value) ? [[name, value] as const] : []
)

const extensionDir = new URL("./fixtures/ext/", import.meta.url)
const raw = (r: unknown) => r

describe("script files", () => {
  it("are all declared: every .lua file of the package has a descriptor", () => {
    const files = readdirSync(new URL("../lua/", import.meta.url)).filter((f) => f.endsWith(".lua")).sort()
    const declared = new Set(descriptors.map(([, d]) => d.file))
    expect(files.filter((f) => !declared.has(f))).toEqual([])
    expect(descriptors.length).toBeGreaterThan(20)
  })

  for (const [name, script] of descriptors) {
    it(`${name} (${script.file}) has a header that lists its KEYS, the ARGV it uses and its replies`, () => {
      expect(scriptHeaderProblems(script)).toEqual([])
      expect(script.sha1).toMatch(/^[0-9a-f]{40}$/)
    })
  }
})

describe("defineScript", () => {
  it("refuses a key count that differs from the file name", () => {
    expect(() => defineScript({ file: "test/echo-1.lua", keys: ["a", "b"], encodeArgs: () => [], decodeReply: raw })).toThrow(/declares 1 keys/)
  })

  it("loads a script from another folder, with core and own includes, nested, each spliced once", () => {
    const script = defineScript({ file: "count-widgets-1.lua", dir: extensionDir, keys: ["widgets"], encodeArgs: (id: string) => [id], decodeReply: raw })
    expect(scriptHeaderProblems(script)).toEqual([])
    // The core library's wrongType and the extension's own helper are both in, the core one once.
    expect(script.source).toContain("local function wrongType")
    expect(script.source.match(/local function wrongType/g)).toHaveLength(1)
    expect(script.source).toContain("local widgetPrefix = 'w:'")
    expect(script.source.indexOf("widgetPrefix = ")).toBeLessThan(script.source.indexOf("function widgetField"))
    expect(script.source).not.toContain("@include")
  })

  it("accepts a folder given as a path", () => {
    const script = defineScript({ file: "count-widgets-1.lua", dir: extensionDir.pathname, keys: ["widgets"], encodeArgs: () => [], decodeReply: raw })
    expect(script.source).toContain("HINCRBY")
  })

  it("refuses an include cycle", () => {
    expect(() => defineScript({ file: "cycle-a-1.lua", dir: extensionDir, keys: ["k"], encodeArgs: () => [], decodeReply: raw })).toThrow(ScriptIncludeError)
  })

  it("the header check names what a lying header leaves out", () => {
    const script = defineScript({ file: "lying-header-1.lua", dir: extensionDir, keys: ["a"], encodeArgs: () => [], decodeReply: raw })
    expect(scriptHeaderProblems(script)).toEqual([
      "lying-header-1.lua: ARGV[1] is used but not documented in the header",
      "lying-header-1.lua: KEYS[2] is past the key count 1 of its file name",
      "lying-header-1.lua: the header does not list the replies (Reply/Replies)"
    ])
  })
})
