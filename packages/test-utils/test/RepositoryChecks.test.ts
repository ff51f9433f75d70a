import { execFileSync } from "node:child_process"
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"

// Issue 21, item 18: the layering and the linter are CI checks (.ci/run), not conventions. Each is
// run here on the checkout, where it passes, and on a tree with violations planted, where it fails
// naming each one.

const root = fileURLToPath(new URL("../../../", import.meta.url))

/** Runs `command` in `cwd`: its exit status and everything it printed. */
const run = (command: string, args: ReadonlyArray<string>, cwd = root): { readonly status: number; readonly out: string } => {
  try {
    return { status: 0, out: execFileSync(command, args, { cwd, encoding: "utf8", stdio: "pipe" }) }
  } catch (error) {
    const failed = error as { status: number; stdout: string; stderr: string }
    return { status: failed.status, out: `${failed.stdout}${failed.stderr}` }
  }
}

const trees: Array<string> = []
afterAll(() => trees.forEach((tree) => rmSync(tree, { recursive: true, force: true })))

/** A temporary tree with `files` in it. */
const plantedTree = (files: Record<string, string>): string => {
  const tree = mkdtempSync(join(tmpdir(), "repo-check-"))
  trees.push(tree)
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(tree, path)), { recursive: true })
    writeFileSync(join(tree, path), text)
  }
  return tree
}

const pkg = (name: string, deps: { dependencies?: Record<string, string>; devDependencies?: Record<string, string> } = {}) => JSON.stringify({ name, ...deps })
const ws = "workspace:^"

describe("dependencies point downwards (.ci/check-layers)", () => {
  it("holds on this checkout", () => {
    const { status, out } = run(join(root, ".ci/check-layers"), [root])
    expect(out).toContain("dependencies point downwards")
    expect(status).toBe(0)
  })

  it("fails on an upward or sideways dependency, test support in production, an undeclared import, a path into another package, an unknown package, a stale exception and a bundled app's workspace dependency", () => {
    const layers = {
      layers: [
        { name: "low", packages: ["@microdcs/low"] },
        { name: "mid", packages: ["@microdcs/mid", "@microdcs/side"] },
        { name: "top", packages: ["@microdcs/top", "@microdcs/bin"] }
      ],
      bundled: { packages: ["@microdcs/bin"] },
      testSupport: { "@microdcs/kit": { above: "mid" } },
      exceptions: [{ from: "@microdcs/top", to: "@microdcs/low", reason: "nothing needs it" }]
    }
    const tree = plantedTree({
      ".ci/layers.json": JSON.stringify(layers),
      "packages/low/package.json": pkg("@microdcs/low", { dependencies: { "@microdcs/mid": ws }, devDependencies: { "@microdcs/kit": ws } }),
      "packages/low/src/index.ts": `import { mid } from "@microdcs/mid"\nexport const low = 1`,
      "packages/low/test/low.test.ts": `import { kit } from "@microdcs/kit"\nimport { low } from "../src/index.js"`,
      "packages/mid/package.json": pkg("@microdcs/mid", { dependencies: { "@microdcs/low": ws, "@microdcs/kit": ws } }),
      "packages/mid/src/index.ts": [`import { low } from "@microdcs/low"`, `import { side } from "@microdcs/side"`, `// import { top } from "@microdcs/top"`, `import { x } from "../../low/src/x.js"`].join("\n"),
      "packages/kit/package.json": pkg("@microdcs/kit", { dependencies: { "@microdcs/mid": ws, "@microdcs/top": ws } }),
      "packages/kit/src/index.ts": `import { mid } from "@microdcs/mid"\nimport { top } from "@microdcs/top"`,
      "packages/stray/package.json": pkg("@microdcs/stray"),
      "apps/top/package.json": pkg("@microdcs/top", { dependencies: { "@microdcs/mid": ws } }),
      "apps/top/src/main.ts": `import { mid } from "@microdcs/mid"\nimport { low } from "@microdcs/low/sub"`,
      // A bundled app: its production code imports the workspace packages its devDependencies list.
      "apps/bin/package.json": pkg("@microdcs/bin", { dependencies: { "@microdcs/low": ws }, devDependencies: { "@microdcs/mid": ws } }),
      "apps/bin/src/main.ts": `import { mid } from "@microdcs/mid"\nimport { low } from "@microdcs/low"`
    })
    const { status, out } = run(join(root, ".ci/check-layers"), [tree])
    expect(status).toBe(1)
    expect(out.split("\n").filter((line) => line.startsWith("  ")).map((line) => line.trim())).toEqual([
      "packages/kit/package.json: dependencies @microdcs/top: @microdcs/top (top) is not below @microdcs/kit (test support above mid)",
      "packages/kit/src/index.ts:2 imports @microdcs/top: @microdcs/top (top) is not below @microdcs/kit (test support above mid)",
      "packages/low/package.json: dependencies @microdcs/mid: @microdcs/mid (mid) is not below @microdcs/low (low)",
      "packages/low/src/index.ts:1 imports @microdcs/mid: @microdcs/mid (mid) is not below @microdcs/low (low)",
      "packages/mid/package.json: dependencies @microdcs/kit: @microdcs/kit is test support, for tests only",
      "packages/mid/src/index.ts:2 imports @microdcs/side: @microdcs/side (mid) is not below @microdcs/mid (mid)",
      "packages/mid/src/index.ts:4 reaches into packages/low/src/x.js by a relative path (import the package instead)",
      "packages/stray/package.json: @microdcs/stray is in no layer of .ci/layers.json (add it where it belongs)",
      "apps/bin/package.json: dependencies @microdcs/low: @microdcs/bin bundles its workspace packages: list @microdcs/low in devDependencies",
      "apps/top/src/main.ts:2 imports @microdcs/low/sub, which apps/top/package.json does not list in dependencies or peerDependencies",
      ".ci/layers.json: the exception @microdcs/top -> @microdcs/low is needed no more (remove it)"
    ])
  })
})

describe("the linter (pnpm lint: biome.jsonc)", () => {
  const biome = join(root, "node_modules/.bin/biome")

  it("passes on this checkout", () => {
    const { status, out } = run(biome, ["lint", "--error-on-warnings", "."])
    expect(out).not.toMatch(/Found \d+ (error|warning)/)
    expect(status).toBe(0)
  }, 60_000)

  it("fails on a floating promise and an object key given twice, and lets the code's own style be", () => {
    const tree = plantedTree({
      ".gitignore": "node_modules\n",
      "packages/p/src/Bugs.ts": [
        `export async function save(): Promise<number> { return 1 }`,
        `export function caller() {`,
        `  save()`,
        `  return { a: 1, a: 2 }`,
        `}`
      ].join("\n"),
      "packages/p/src/Style.ts": [`export const first = (rows: ReadonlyArray<Record<string, string>>) => rows[0]!["type"]`, `export const log = (x: string) => void (seen = x)`, `let seen = ""`].join("\n")
    })
    copyFileSync(join(root, "biome.jsonc"), join(tree, "biome.jsonc"))
    run("git", ["init", "-q"], tree) // the configuration reads .gitignore through git
    const { status, out } = run(biome, ["lint", "--error-on-warnings", "."], tree)
    expect(status).toBe(1)
    expect([...out.matchAll(/^(\S+):(\d+):\d+ (lint\/\S+)/gm)].map((m) => `${m[1]}:${m[2]} ${m[3]}`).sort()).toEqual([
      "packages/p/src/Bugs.ts:3 lint/nursery/noFloatingPromises",
      "packages/p/src/Bugs.ts:4 lint/suspicious/noDuplicateObjectKeys"
    ])
  }, 60_000)

  it("fails on a source function over 40 lines and a source file over 300, and leaves tests alone", () => {
    const longFunction = ["export const long = () => {", ...Array.from({ length: 41 }, (_, i) => `  console.log(${i})`), "}"]
    const manyLines = Array.from({ length: 301 }, (_, i) => `export const line${i} = ${i}`)
    const tree = plantedTree({
      ".gitignore": "node_modules\n",
      "packages/p/src/Long.ts": longFunction.join("\n"),
      "packages/p/src/Big.ts": manyLines.join("\n"),
      "packages/p/test/Long.test.ts": [...longFunction, ...manyLines].join("\n")
    })
    copyFileSync(join(root, "biome.jsonc"), join(tree, "biome.jsonc"))
    run("git", ["init", "-q"], tree)
    const { status, out } = run(biome, ["lint", "--error-on-warnings", "."], tree)
    expect(status).toBe(1)
    expect([...out.matchAll(/^(\S+):(\d+):\d+ (lint\/\S+)/gm)].map((m) => `${m[1]} ${m[3]}`).sort()).toEqual([
      "packages/p/src/Big.ts lint/style/noExcessiveLinesPerFile",
      "packages/p/src/Long.ts lint/complexity/noExcessiveLinesPerFunction"
    ])
  }, 60_000)
})

describe("no design page outside the repository is cited (.ci/check-no-design-citations)", () => {
  const check = join(root, ".ci/check-no-design-citations")
  // Built from parts, so this file cites nothing itself.
  const page = (name: string) => `${name}.md`
  const outside = `../${"shared"}`

  it("holds on this checkout", () => {
    const { status, out } = run(check, [root])
    expect(out).toContain("no design page outside the repository is cited")
    expect(status).toBe(0)
  })

  it("fails on a cited page or the folder beside the checkout, listing file:line, and on an allowed file that cites nothing any more", () => {
    const tree = plantedTree({
      ".ci/design-citations-allowed.txt": "# waiting for a fix\npackages/p/src/Waiting.ts\npackages/p/src/Fixed.ts\n",
      ".ci/notes": `the checks themselves may name ${page("data-layer")}`,
      "docs/guide.md": `# Guide\n\nThe fixtures were in ${outside}/fixtures once.\n`,
      "packages/p/README.md": `# p\nReplies are kept (${page("island")} §2).\n`,
      "packages/p/src/Engine.ts": `export const engine = 1\n/** Timeouts (\`${page("sfc")}\` §3). */\n`,
      "packages/p/src/Fine.ts": "// an island, the sfc engine, a journal, MQTT 5 §1.5.4, notes.md, island.mdx\n",
      "packages/p/src/Waiting.ts": `// (${page("journal")} §6)\n`,
      "packages/p/src/Fixed.ts": "// cites nothing any more\n"
    })
    run("git", ["init", "-q"], tree)
    run("git", ["add", "-A"], tree)
    writeFileSync(join(tree, "untracked.md"), `not tracked: ${page("console")}\n`)
    const { status, out } = run(check, [tree])
    expect(status).toBe(1)
    expect(out.split("\n").filter((line) => line.startsWith("  ")).map((line) => line.trim())).toEqual([
      `docs/guide.md:3:The fixtures were in ${outside}/fixtures once.`,
      `packages/p/README.md:2:Replies are kept (${page("island")} §2).`,
      `packages/p/src/Engine.ts:2:/** Timeouts (\`${page("sfc")}\` §3). */`,
      "packages/p/src/Fixed.ts"
    ])
  })
})
