import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { build } from "tsup"
import { afterAll, describe, expect, it } from "vitest"
import { makeKeySchema } from "@microdcs/keyschema"
import { keySchemaLawProblems } from "@microdcs/keyschema/testing"
import { embedLuaPlugin } from "@microdcs/lua-scripts/build"
import { journalKeyFamilies, journalScripts } from "@microdcs/journal"

// The journal as an extension: its key families obey the key laws beside the core ones, and its
// scripts are embedded by a build, so a bundle runs with no lua/ folder beside it.

describe("the journal package", () => {
  it("its key families register beside the core ones and keep the key laws", () => {
    const schema = makeKeySchema("plant-a", { families: [journalKeyFamilies] })
    if (!("extend" in schema)) throw new Error(`refused: ${String((schema as { message?: string }).message)}`)
    expect(keySchemaLawProblems(schema)).toEqual([])
    expect(schema.key("counterBucket", { scope: "line:1", journal: "torque", counter: "nok_1h", value: "nr|3" })).toBe(
      "plant-a:counter:bucket:line%3A1:torque:nok_1h:nr%7C3"
    )
    expect(schema.parse("plant-a:journal:index:line-1:torque:tool:nr-3")).toEqual({
      family: "journalIndex",
      parts: { scope: "line-1", journal: "torque", searchKey: "tool", value: "nr-3" }
    })
  })

  const work = mkdtempSync(join(tmpdir(), "journal-embed-"))
  afterAll(() => rmSync(work, { recursive: true, force: true }))

  it("a build embeds the journal's scripts (and the core library they include): the same sources and SHA1s, no lua/ folder needed", async () => {
    const outDir = join(work, "out")
    await build({
      entry: { index: fileURLToPath(new URL("../src/JournalScripts.ts", import.meta.url)) },
      outDir,
      format: ["esm"],
      dts: false,
      sourcemap: false,
      clean: false,
      silent: true,
      config: false,
      // Bundled with the lua-scripts source, as the admin CLI bundles it.
      noExternal: [/@microdcs\//],
      esbuildOptions: (options) => {
        options.conditions = ["source"]
      },
      esbuildPlugins: [embedLuaPlugin]
    })
    const alone = join(work, "alone")
    mkdirSync(alone)
    copyFileSync(join(outDir, "index.js"), join(alone, "index.mjs"))
    const built = (await import(pathToFileURL(join(alone, "index.mjs")).href)) as { journalScripts: typeof journalScripts }
    expect(built.journalScripts.map((s) => [s.file, s.sha1])).toEqual(journalScripts.map((s) => [s.file, s.sha1]))
    expect(built.journalScripts[0]!.source).toContain("local function wrongType")
  }, 60_000)
})
