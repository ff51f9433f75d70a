import { readFileSync, writeFileSync } from "node:fs"
import { describe, expect, it } from "vitest"

// Issue 10, item 6: each package's entries export what a consumer should use, and nothing more.
// The names (values; types leave nothing at run time) are pinned in public-api.json, so a new or
// a vanished export is a deliberate change: edit the list in the same commit (or rewrite it with
// `UPDATE_PUBLIC_API=1 pnpm vitest run packages/test-utils/test/PublicApi.test.ts`, then read the diff).

const listFile = new URL("./public-api.json", import.meta.url)
const expected: Record<string, ReadonlyArray<string>> = JSON.parse(readFileSync(listFile, "utf8"))

// Relative imports: this package cannot depend on the packages it checks (they test with it).
const entries: Record<string, () => Promise<Record<string, unknown>>> = {
  "@microdcs/keyschema": () => import("../../keyschema/src/index.js"),
  "@microdcs/keyschema/testing": () => import("../../keyschema/src/testing.js"),
  "@microdcs/lua-scripts": () => import("../../lua-scripts/src/index.js"),
  "@microdcs/store": () => import("../../store/src/index.js"),
  "@microdcs/store/testing": () => import("../../store/src/testing.js"),
  "@microdcs/store/unsafe": () => import("../../store/src/unsafe.js"),
  "@microdcs/poller": () => import("../../poller/src/index.js"),
  "@microdcs/job-state": () => import("../../job-state/src/index.js"),
  "@microdcs/sfc": () => import("../../sfc/src/index.js"),
  "@microdcs/sfc/testing": () => import("../../sfc/src/testing.js"),
  "@microdcs/sfc-runtime": () => import("../../sfc-runtime/src/index.js"),
  "@microdcs/cloudevents-mqtt": () => import("../../cloudevents-mqtt/src/index.js"),
  "@microdcs/cloudevents-mqtt/testing": () => import("../../cloudevents-mqtt/src/testing.js"),
  "@microdcs/job-control": () => import("../../job-control/src/index.js"),
  "@microdcs/island-mqtt": () => import("../../island-mqtt/src/index.js"),
  "@microdcs/island-sim": () => import("../../island-sim/src/index.js"),
  "@microdcs/publisher": () => import("../../publisher/src/index.js"),
  "@microdcs/embedded": () => import("../../embedded/src/index.js"),
  "@microdcs/execution-log": () => import("../../execution-log/src/index.js"),
  "@microdcs/execution-log/testing": () => import("../../execution-log/src/testing.js"),
  "@microdcs/journal": () => import("../../journal/src/index.js"),
  "@microdcs/contract": () => import("../../contract/src/index.js")
}

describe.runIf(process.env["UPDATE_PUBLIC_API"] !== undefined)("rewriting the list", () => {
  it("writes every entry's names to public-api.json", async () => {
    const names: Record<string, ReadonlyArray<string>> = {}
    for (const [entry, load] of Object.entries(entries)) names[entry] = Object.keys(await load()).sort()
    writeFileSync(listFile, `${JSON.stringify(names, null, 2)}\n`)
  })
})

describe.skipIf(process.env["UPDATE_PUBLIC_API"] !== undefined)("the public API of every package", () => {
  it("pins every entry that exists", () => {
    expect(Object.keys(entries).sort()).toEqual(Object.keys(expected).sort())
  })

  for (const [entry, load] of Object.entries(entries)) {
    it(`${entry} exports exactly the listed names`, async () => {
      const names = Object.keys(await load()).sort()
      expect(names).toEqual([...(expected[entry] ?? [])].sort())
    })
  }
})
