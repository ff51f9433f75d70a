import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

// The store's extension guide takes its code from this example; this keeps the two in step.
// Every line of its ```ts and ```lua blocks (but an elision, `// ...` or `-- ...`) must occur in
// a file of the example, so a rename here that the guide misses fails.
const guide = readFileSync(new URL("../../../packages/store/EXTENDING.md", import.meta.url), "utf8")
const root = fileURLToPath(new URL("../", import.meta.url))

const filesUnder = (dir: string): Array<string> =>
  readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(ts|lua)$/.test(entry.name) && entry.name !== "ExtendingGuide.test.ts")
    .map((entry) => join(entry.parentPath, entry.name))

const example = ["src", "lua", "test"].flatMap(filesUnder).map((file) => readFileSync(file, "utf8")).join("\n")

const blocks = [...guide.matchAll(/^```(ts|lua)\n([\s\S]*?)^```$/gm)].map((m) => ({ language: m[1]!, code: m[2]! }))

describe("EXTENDING.md", () => {
  it("has code blocks", () => {
    expect(blocks.length).toBeGreaterThanOrEqual(8)
  })

  it.each(blocks.map((block, i) => [i + 1, block] as const))("code block %i is taken from the example", (_, block) => {
    const lines = block.code.split("\n").map((line) => line.trim())
    const missing = lines.filter((line) => line !== "" && line !== "// ..." && line !== "-- ..." && !example.includes(line))
    expect(missing).toEqual([])
  })
})
