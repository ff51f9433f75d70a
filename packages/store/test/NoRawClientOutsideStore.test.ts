import { readdirSync, readFileSync } from "node:fs"
import { join, relative, sep } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

// Issue 10, item 5: no package outside the store touches a Valkey key through the raw client.
// Every key is read and written through a DAO of `@microdcs/store`, which types its errors
// (WrongType, InvalidInput, NotFound) and knows the value formats. `Valkey.command` stays as
// the escape hatch of extensions: code under an `extensions/` folder may use it for the key
// families it registers itself (none exists today).

const root = fileURLToPath(new URL("../../../", import.meta.url))

/** The raw uses: the client itself, and the unchecked key builder that only feeds it. */
const RAW_USES: ReadonlyArray<readonly [name: string, pattern: RegExp]> = [
  ["Valkey.command", /\.command\(/],
  ["Valkey.durable", /\.durable\(/],
  ["Valkey.script", /\.script\(/],
  ["Valkey.dedicated", /\.dedicated\(/],
  ["raw key schema", /\bvalkey\.keys\b|\.keys\.(key|pattern|parse|extend)\(/],
  ["a client of its own", /from\s+["']iovalkey["']/]
]

/**
 * Files that may keep a raw use, each with its reason. A path ending in `/` covers the folder.
 * Keep it short: a new entry needs a reason a reviewer accepts.
 */
const ALLOWED: ReadonlyArray<{ readonly path: string; readonly reason: string }> = [
  {
    path: "packages/testkit/",
    reason: "a private test-only package (never in the daemon or the CLI): tests read every key raw to prove what the store wrote"
  },
  {
    path: "packages/journal/",
    reason: "an extension package: it reads and writes only the key families it registers itself (journal:*, counter:*), through Valkey.command and Valkey.script, as extension code may"
  }
]

/** An extension's code: its own key families have no DAO in the store, so the escape hatch is its door. */
const isExtensionCode = (path: string) => path.split("/").includes("extensions")

const sourceFiles = (dir: string): ReadonlyArray<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : sourceFiles(path)
    return /\.(ts|tsx|mts|js|mjs)$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [path] : []
  })

/** Comment lines say what code does; only code counts. */
const codeLines = (text: string): ReadonlyArray<readonly [line: number, code: string]> =>
  text
    .replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, " "))
    .split("\n")
    .map((code, i) => [i + 1, code] as const)
    .filter(([, code]) => !code.trim().startsWith("//"))

interface RawUse {
  readonly file: string
  readonly line: number
  readonly use: string
  readonly code: string
}

/** The raw uses in one file's text. */
const rawUsesIn = (file: string, text: string): ReadonlyArray<RawUse> =>
  codeLines(text).flatMap(([line, code]) =>
    RAW_USES.filter(([, pattern]) => pattern.test(code)).map(([use]) => ({ file, line, use, code: code.trim() }))
  )

/** Every `src` folder of a package or app, except the store's own. */
const scannedSources = (): ReadonlyArray<string> =>
  ["packages", "apps"].flatMap((group) =>
    readdirSync(join(root, group), { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && !(group === "packages" && entry.name === "store"))
      .flatMap((entry) => {
        try {
          return sourceFiles(join(root, group, entry.name, "src"))
        } catch {
          return [] // a package without src
        }
      })
  )

const repoPath = (file: string) => relative(root, file).split(sep).join("/")

describe("no raw Valkey client outside the store", () => {
  it("no package or app outside packages/store uses Valkey.command/durable/script/dedicated or the raw key schema", () => {
    const offenders = scannedSources()
      .map(repoPath)
      .filter((path) => !isExtensionCode(path) && !ALLOWED.some((a) => (a.path.endsWith("/") ? path.startsWith(a.path) : path === a.path)))
      .flatMap((path) => rawUsesIn(path, readFileSync(join(root, path), "utf8")))
      .map((u) => `${u.file}:${u.line} ${u.use}: ${u.code}`)
    expect(offenders).toEqual([])
  })

  it("the scan finds every kind of raw use, and none in comments", () => {
    const sample = [
      `const v = yield* valkey.command("get", (c) => c.get(key))`,
      `yield* valkey.durable("set", (c) => c.set(key, "1"))`,
      `yield* valkey.script(leaseAcquire, { lease: key }, args)`,
      `const sub = yield* valkey.dedicated("nudges")`,
      `const key = valkey.keys.key("sfcHeartbeat", {}) as string`,
      `const k = ctx.keys.pattern("jobOrder")`,
      `import { Redis } from "iovalkey"`,
      `// valkey.command("a comment", ...) is no use`,
      `/** valkey.dedicated(...) in a doc comment is none either */`,
      `const sizes = yield* scopeSizes.sizes(Object.keys(rows))`
    ].join("\n")
    expect(rawUsesIn("sample.ts", sample).map((u) => [u.line, u.use])).toEqual([
      [1, "Valkey.command"],
      [2, "Valkey.durable"],
      [3, "Valkey.script"],
      [4, "Valkey.dedicated"],
      [5, "raw key schema"],
      [6, "raw key schema"],
      [7, "a client of its own"]
    ])
  })

  it("every allow-list entry names a file or folder that exists and has a reason", () => {
    const scanned = scannedSources().map(repoPath)
    for (const entry of ALLOWED) {
      expect(entry.reason.length).toBeGreaterThan(20)
      expect(scanned.some((path) => (entry.path.endsWith("/") ? path.startsWith(entry.path) : path === entry.path))).toBe(true)
    }
  })
})
