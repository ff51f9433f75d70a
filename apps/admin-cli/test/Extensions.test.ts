import { build } from "esbuild"
import { cpSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { KeyFamilyError } from "@microdcs/keyschema"
import { embedLuaPlugin } from "@microdcs/lua-scripts/build"
import { Valkey } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { randomPrefix } from "@microdcs/test-utils"
import { type Cli, makeCli } from "./Cli.js"
import { gadgetKeys } from "./fixtures/gadgets/gadgets.js"
import { withStore } from "./Seed.js"

// `index check` / `index rebuild` over an extension's family, named in MICRODCS_EXTENSIONS.
const url = inject("valkeyUrl")
const prefix = randomPrefix("cli-ext")
const fixtures = new URL("./fixtures/gadgets/", import.meta.url)
let cli: Cli
let root: string
let extension: string

/** The fixture built as an extension ships: one ES module with its `lua/` folder beside it. */
const bundleExtension = async (dir: string): Promise<string> => {
  const outfile = join(dir, "gadgets", "gadgets.mjs")
  await build({
    entryPoints: [fileURLToPath(new URL("gadgets.ts", fixtures))],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    conditions: ["source"],
    plugins: [embedLuaPlugin],
    logLevel: "warning",
    banner: { js: 'import { createRequire as __createRequire } from "node:module";\nconst require = __createRequire(import.meta.url);' }
  })
  cpSync(fileURLToPath(new URL("lua/", fixtures)), join(dir, "gadgets", "lua"), { recursive: true })
  return outfile
}

/** g1 listed, g2 missing from the list, a ghost member without document. */
const breakGadgets = () =>
  withStore(
    url,
    prefix,
    Effect.gen(function* () {
      const valkey = yield* Valkey
      const keys = valkey.keys.extend(gadgetKeys)
      if (keys instanceof KeyFamilyError) throw new Error(keys.message)
      const list = keys.key("gadgetList", { scope: "line-1" }) as string
      const scopes = yield* valkey.key("scopes", {})
      yield* unsafeCommand(valkey, "seed gadgets", (c) =>
        c
          .multi()
          .hset(keys.key("gadget", { id: "g1" }) as string, "v", "1", "scope", "line-1")
          .hset(keys.key("gadget", { id: "g2" }) as string, "v", "3", "scope", "line-1")
          .sadd(list, "g1", "ghost")
          .sadd(scopes, "line-1")
          .exec()
      )
    })
  )

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "microdcs-ext-"))
  ;[cli, extension] = await Promise.all([makeCli(url, prefix), bundleExtension(root)])
  await breakGadgets()
}, 120_000)
afterAll(() => {
  cli?.dispose()
  if (root) rmSync(root, { recursive: true, force: true })
})

describe("index with MICRODCS_EXTENSIONS", () => {
  it("check and rebuild walk the families an extension module exports; without it they are not seen", async () => {
    const env = { MICRODCS_EXTENSIONS: extension }
    const [unseen, table] = await Promise.all([cli.run(["index", "check"]), cli.run(["index", "check"], env)])
    expect(unseen.code).toBe(0)
    expect(table.code).toBe(1)
    const rows = table.stdout.trim().split("\n").slice(1).map((l) => l.split(/\s+/).slice(0, 3))
    expect(rows.map(([kind, , member]) => `${kind} ${member}`).sort()).toEqual([
      "document-missing-from-index g2",
      "index-entry-without-document ghost"
    ])

    const rebuilt = await cli.run(["index", "rebuild", "--yes"], env)
    expect(rebuilt.code).toBe(0)
    expect(rebuilt.stdout).toMatch(/^repaired:\s+1$/m)
    expect(rebuilt.stdout).toMatch(/^removed:\s+1$/m)
    // The progress names the extension's family, as the last of eight phases.
    expect(rebuilt.stderr.trim().split("\n").at(-1)).toMatch(/^\[#+-*\] 8\/8 gadget\s+scanned \d+, repaired 1, removed 1$/)
    const after = await cli.run(["index", "check"], env)
    expect(after.code).toBe(0)
    expect(after.stdout.trim()).toBe("no inconsistencies")
  }, 120_000)

  it("a module that cannot be loaded or exports no indexedFamilies is a usage error, before anything is touched", async () => {
    const notAnExtension = fileURLToPath(new URL("not-an-extension.mjs", fixtures))
    const [missing, wrong] = await Promise.all([
      cli.run(["index", "rebuild", "--yes"], { MICRODCS_EXTENSIONS: "./no-such-extension.mjs" }),
      cli.run(["index", "check", "--json"], { MICRODCS_EXTENSIONS: `${extension}, ${notAnExtension}` })
    ])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toMatch(/^error: MICRODCS_EXTENSIONS: cannot load '\.\/no-such-extension\.mjs'/)
    expect(wrong.code).toBe(2)
    expect(JSON.parse(wrong.stderr)).toMatchObject({ error: "UsageError", exitCode: 2 })
    expect(JSON.parse(wrong.stderr).message).toContain(`'${notAnExtension}' does not export indexedFamilies`)
  }, 120_000)
})
