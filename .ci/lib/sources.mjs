// What the repository checks read: the workspace's packages and the code files of each, with
// comments blanked out (a comment that names a rule is no use of it) and the modules they import.
import { readdirSync, readFileSync } from "node:fs"
import { join, relative, sep } from "node:path"

const SKIPPED_DIRS = new Set(["node_modules", "dist", "console-dist", ".git", ".turbo", "coverage"])
const CODE = /\.(ts|tsx|mts|cts|js|mjs|cjs)$/

/** Every package of the workspace (the folders pnpm-workspace.yaml names): its folder and package.json. */
export const workspacePackages = (root) =>
  ["packages", "apps", "examples", "bench"].flatMap((group) => {
    const dirs = group === "bench" ? ["bench"] : subdirs(join(root, group)).map((name) => join(group, name))
    return dirs.flatMap((dir) => {
      try {
        return [{ dir: dir.split(sep).join("/"), json: JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8")) }]
      } catch {
        return []
      }
    })
  })

const subdirs = (dir) => {
  try {
    return readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort()
  } catch {
    return []
  }
}

/** The code files under `dir` (a path from `root`), as paths from `root` with `/` separators; no declarations. */
export const codeFiles = (root, dir) => {
  const walk = (path) => {
    let entries
    try {
      entries = readdirSync(join(root, path), { withFileTypes: true })
    } catch {
      return []
    }
    return entries.sort((a, b) => (a.name < b.name ? -1 : 1)).flatMap((entry) => {
      const child = `${path}/${entry.name}`
      if (entry.isDirectory()) return SKIPPED_DIRS.has(entry.name) ? [] : walk(child)
      return CODE.test(entry.name) && !/\.d\.[mc]?ts$/.test(entry.name) ? [child] : []
    })
  }
  return walk(dir)
}

/** Test code: a file under a `test/` folder, or a `*.test.*` file. Everything else ships or runs as the product. */
export const isTestFile = (path) => path.split("/").includes("test") || /\.test\.[a-z]+$/.test(path)

/**
 * The file's code: every comment, and the text of every template literal (imports never use one;
 * a test's planted source does), replaced by spaces, so line numbers stay. Quoted strings are kept.
 */
export const withoutComments = (text) =>
  text.replace(/("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')|`(?:[^`\\]|\\.)*`|\/\*[\s\S]*?\*\/|\/\/[^\n]*/g, (match, string) =>
    string !== undefined ? match : match.replace(/[^\n]/g, " ")
  )

/** The module specifiers a file imports, re-exports, imports dynamically or requires, with their lines. */
export const importsOf = (code) => {
  const found = []
  const patterns = [
    /\b(?:import|export)\s+(?:type\s+)?[^"'`;]*?\bfrom\s*["']([^"']+)["']/g,
    /\bimport\s*["']([^"']+)["']/g,
    /\bimport\s*\(\s*["']([^"']+)["']\s*\)/g,
    /\brequire\s*\(\s*["']([^"']+)["']\s*\)/g
  ]
  for (const pattern of patterns) {
    for (const m of code.matchAll(pattern)) found.push({ specifier: m[1], line: code.slice(0, m.index).split("\n").length })
  }
  return found.sort((a, b) => a.line - b.line)
}

/** The lines of `code` (1-based) with the text of each. */
export const linesOf = (code) => code.split("\n").map((text, i) => ({ line: i + 1, text }))

export const repoPath = (root, path) => relative(root, path).split(sep).join("/")
