import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { build } from "tsup"
import { afterAll, describe, expect, it } from "vitest"
import * as fromSource from "@microdcs/lua-scripts"
import { embedLuaPlugin } from "@microdcs/lua-scripts/build"

// A bundled service has no lua/ folder beside it: the build must carry every script inline.
const isDescriptor = (value: unknown): value is fromSource.ScriptDescriptor<string, unknown, unknown> =>
  typeof value === "object" && value !== null && "sha1" in value && "source" in value && "file" in value

describe("embedded Lua sources", () => {
  const work = mkdtempSync(join(tmpdir(), "lua-embed-"))
  afterAll(() => rmSync(work, { recursive: true, force: true }))

  it("a build of the package runs from a folder with no lua/ files, with the same sources and SHA1s", async () => {
    const outDir = join(work, "out")
    await build({
      entry: { index: fileURLToPath(new URL("../src/index.ts", import.meta.url)) },
      outDir,
      format: ["esm"],
      dts: false,
      sourcemap: false,
      clean: false,
      silent: true,
      config: false,
      esbuildPlugins: [embedLuaPlugin]
    })
    // Alone in a fresh folder: nothing on disk to read the scripts from.
    const alone = join(work, "alone")
    const moduleFile = join(alone, "index.mjs")
    mkdirSync(alone)
    copyFileSync(join(outDir, "index.js"), moduleFile)
    const built = (await import(pathToFileURL(moduleFile).href)) as Record<string, unknown>

    const expected = Object.entries(fromSource).filter(([, value]) => isDescriptor(value))
    expect(expected.length).toBeGreaterThan(20)
    for (const [name, descriptor] of expected) {
      const embedded = built[name]
      if (!isDescriptor(embedded) || !isDescriptor(descriptor)) throw new Error(`${name} is missing from the build`)
      expect({ name, source: embedded.source, sha1: embedded.sha1 }).toEqual({ name, source: descriptor.source, sha1: descriptor.sha1 })
    }
  }, 60_000)
})
