import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"

// Issue 10, item 5 and issue 21, item 18: no package outside the store touches Valkey through a
// client of its own or the raw client (the journal did, a day after the rule was written down).
// The rule is a CI check, `.ci/check-store-boundary`; this file runs it on the checkout and on a
// tree with every kind of violation planted.

const root = fileURLToPath(new URL("../../../", import.meta.url))
const check = join(root, ".ci/check-store-boundary")

/** Runs the check on `dir`: its exit status and its report. */
const runCheck = (dir: string): { readonly status: number; readonly out: string } => {
  try {
    return { status: 0, out: execFileSync(check, [dir], { encoding: "utf8" }) }
  } catch (error) {
    const failed = error as { status: number; stdout: string }
    return { status: failed.status, out: failed.stdout }
  }
}

const planted = mkdtempSync(join(tmpdir(), "store-boundary-"))
afterAll(() => rmSync(planted, { recursive: true, force: true }))

const plant = (files: Record<string, string>) => {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(planted, path)), { recursive: true })
    writeFileSync(join(planted, path), text)
  }
}

describe("the store's boundary (.ci/check-store-boundary)", () => {
  it("holds on this checkout", () => {
    const { status, out } = runCheck(root)
    expect(out).toContain("the store's boundary holds")
    expect(status).toBe(0)
  })

  it("fails on each kind of crossing, names file and line, and ignores comments, the store, bench, tests' unsafe entry and a bundling app's dependency on the client", () => {
    plant({
      "packages/widget/package.json": JSON.stringify({ name: "@microdcs/widget", dependencies: { iovalkey: "~0.4.0" } }),
      "packages/widget/src/Widget.ts": [
        `import { Redis } from "iovalkey"`,
        `import { unsafeCommand } from "@microdcs/store/unsafe"`,
        `const a = yield* unsafeCommand(valkey, "get", (c) => c.get(key))`,
        `const b = yield* valkey.dedicated("nudges")`,
        `const key = valkey.keys.key("sfcHeartbeat", {}) as string`,
        `// valkey.command("a comment", ...) is no use`,
        `/** valkey.dedicated(...) in a doc comment is none either */`,
        `const sizes = yield* scopeSizes.sizes(Object.keys(rows))`,
        `const door = (valkey as any)[Symbol.for("@microdcs/store/rawDoor")]`
      ].join("\n"),
      "packages/widget/test/Widget.test.ts": [`import { unsafeCommand } from "@microdcs/store/unsafe"`, `import type { Redis } from "iovalkey"`].join("\n"),
      "packages/store/package.json": JSON.stringify({ name: "@microdcs/store", dependencies: { iovalkey: "~0.4.0" } }),
      "packages/store/src/Valkey.ts": `import { Redis } from "iovalkey"\nconst v = command(valkey, "get", (c) => c.get(k))`,
      "packages/journal/package.json": JSON.stringify({ name: "@microdcs/journal" }),
      "packages/journal/src/Keys.ts": `const keys = valkey.keys.extend(journalKeyFamilies)`,
      "bench/package.json": JSON.stringify({ name: "@microdcs/bench", dependencies: { iovalkey: "~0.4.0" } }),
      "bench/raw.ts": `import { Redis } from "iovalkey"\nyield* unsafeCommand(valkey, "client", async (c) => c)`,
      // An app whose bin bundles the store installs its client, and still imports none.
      ".ci/layers.json": JSON.stringify({ layers: [], bundled: { packages: ["@microdcs/bin"] } }),
      "apps/bin/package.json": JSON.stringify({ name: "@microdcs/bin", dependencies: { iovalkey: "~0.4.0" }, devDependencies: { iovalkey: "~0.4.0" } }),
      "apps/bin/src/main.ts": `import { Redis } from "iovalkey"`
    })
    const { status, out } = runCheck(planted)
    expect(status).toBe(1)
    expect(out.split("\n").filter((line) => line.startsWith("  ")).map((line) => line.trim().split(" ").slice(0, 3).join(" "))).toEqual([
      "packages/widget/package.json: dependencies names",
      "packages/widget/src/Widget.ts:1 imports iovalkey",
      "packages/widget/src/Widget.ts:2 imports @microdcs/store/unsafe",
      "packages/widget/src/Widget.ts:2 the unsafe",
      "packages/widget/src/Widget.ts:3 the unsafe",
      "packages/widget/src/Widget.ts:4 a raw",
      "packages/widget/src/Widget.ts:5 the raw",
      "packages/widget/src/Widget.ts:9 the store's",
      "packages/widget/test/Widget.test.ts:2 imports iovalkey",
      "apps/bin/package.json: devDependencies names",
      "apps/bin/src/main.ts:1 imports iovalkey"
    ])
  })
})
