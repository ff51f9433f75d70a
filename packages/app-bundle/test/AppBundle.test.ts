import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { AppBundleFailed, bundleApp, packageOf, shebang } from "../src/index.js"

// Fixture apps bundled with real esbuild into a folder under this package's node_modules, where
// Node finds the third-party packages a bundle imports (the workspace root's, as an install would
// give them).
const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}/`, import.meta.url))
const cache = fileURLToPath(new URL("../node_modules/.cache/", import.meta.url))
mkdirSync(cache, { recursive: true })
const out = mkdtempSync(join(cache, "app-bundle-test-"))
afterAll(() => rmSync(out, { recursive: true, force: true }))

const problemsOf = (error: unknown): ReadonlyArray<string> => (error instanceof AppBundleFailed ? error.problems : [String(error)])

describe("bundleApp", () => {
  it("bundles the workspace packages and leaves the app's dependencies as imports; the bin runs", async () => {
    const outfile = join(out, "good", "main.mjs")
    await bundleApp({ appRoot: fixture("good"), entries: [{ source: join(fixture("good"), "src/main.ts"), outfile, shebang: shebang(["--no-warnings"]) }] })
    const text = readFileSync(outfile, "utf8")
    expect(text.split("\n")[0]).toBe("#!/usr/bin/env -S node --no-warnings")
    expect(text).toMatch(/from "iovalkey"/)
    expect(text).toMatch(/from "effect"/)
    expect(text).not.toMatch(/from "@microdcs\//)
    // The store's Lua scripts are inline: no lua/ folder is read at run time.
    expect(text).toContain("put-joborder")
    expect(execFileSync(process.execPath, [outfile], { encoding: "utf8" })).toBe("store config: true, layer: function\n")
  })

  it("lists every problem: an undeclared package, another range than the bundled package's, a workspace package as a dependency", async () => {
    const entries = [{ source: join(fixture("bad"), "src/main.ts"), outfile: join(out, "bad", "main.mjs") }]
    const problems = await bundleApp({ appRoot: fixture("bad"), entries }).then(() => [], problemsOf)
    expect(problems.some((p) => /^effect\b.*effect is not among fixture-bad-app's dependencies/.test(p))).toBe(true)
    expect(problems.some((p) => p.includes("fixture-bad-app declares iovalkey@^0.4.0, @microdcs/store depends on iovalkey@~0.4.0"))).toBe(true)
    expect(problems).toContain("@microdcs/keyschema is bundled: it belongs in fixture-bad-app's devDependencies, not its dependencies")
  })

  it("refuses a dependency no bundle imports, and an entry with a #! line of its own", async () => {
    const unused = [{ source: join(fixture("unused"), "src/main.ts"), outfile: join(out, "unused", "main.mjs") }]
    expect(await bundleApp({ appRoot: fixture("unused"), entries: unused }).then(() => [], problemsOf)).toEqual([
      "left-pad is among fixture-unused-app's dependencies but no bundle imports it (remove it)"
    ])
    const hashbang = [{ source: join(fixture("unused"), "src/hashbang.ts"), outfile: join(out, "unused", "hashbang.mjs"), shebang: shebang() }]
    const problems = await bundleApp({ appRoot: fixture("unused"), entries: hashbang }).then(() => [], problemsOf)
    expect(problems).toEqual([`${hashbang[0]!.source} starts with a #! line of its own: leave it to the entry's shebang`])
  })

  it("names the package of a specifier", () => {
    expect(["effect", "effect/Schema", "@effect/sql-pg", "@effect/sql-pg/PgClient"].map(packageOf)).toEqual(["effect", "effect", "@effect/sql-pg", "@effect/sql-pg"])
  })
})
