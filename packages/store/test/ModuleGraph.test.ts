import { fileURLToPath } from "node:url"
import { parseCircular, parseDependencyTree } from "dpdm"
import { describe, expect, it } from "vitest"

// Issue 10, item 6: the store's modules form no import cycle (Valkey.ts once reached itself
// through Document.ts and OutcomeCheck.ts), and its main entry leaves the test seams to
// `@microdcs/store/testing`.

const root = fileURLToPath(new URL("../../../", import.meta.url))
const entries = ["packages/store/src/index.ts", "packages/store/src/testing.ts", "packages/store/src/unsafe.ts"]

describe("the store's module graph", () => {
  it("has no import cycle, type-only imports included", async () => {
    const tree = await parseDependencyTree(entries, { context: root, cwd: root, transform: false, onProgress: () => {} })
    expect(parseCircular(tree).map((cycle) => cycle.join(" -> "))).toEqual([])
  })

  it("exports the test seams only from @microdcs/store/testing", async () => {
    const main: Record<string, unknown> = await import("@microdcs/store")
    const testing: Record<string, unknown> = await import("@microdcs/store/testing")
    expect(Object.keys(testing).sort()).toEqual(["IndexReadHook", "autoClaimDeletedCounter", "cutUtf8", "interceptCommands", "jobOrderSearchFacts", "judgeMember", "membershipOf", "startScore"])
    expect(Object.keys(main).filter((name) => name in testing)).toEqual([])
    // What an extension builds its own document DAO from is on the main entry.
    for (const name of ["makeDocumentDao", "writeResult", "writeFailure", "settleWrite", "wrongTypeError", "keyProblem", "keyPartProblem", "documentProblem", "validateText"]) {
      expect(typeof main[name], name).toBe("function")
    }
  })
})
