import { existsSync, readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { parse } from "yaml"
import { contractDocument, contractFiles } from "@microdcs/contract"

/**
 * The checked-in contract is the generated one: `docs/asyncapi.yaml` and every schema file under
 * `docs/schemas` hold exactly what the code generates, so the published contract cannot drift
 * from the topic builders, type names and schemas it is made of.
 */

const root = new URL("../../../", import.meta.url)
const fix = "run `pnpm contract` to write the contract's files again, then review and commit them"

describe("the checked-in contract files", () => {
  it("are what `pnpm contract` writes", () => {
    const stale = contractFiles().flatMap((file) => {
      const path = new URL(file.path, root)
      if (!existsSync(path)) return [`${file.path} is missing`]
      return readFileSync(path, "utf8") === file.text ? [] : [`${file.path} differs`]
    })
    expect(stale, `${stale.join("\n")}\n${fix}`).toEqual([])
  })

  it("read back as the document contractDocument() builds", () => {
    expect(parse(readFileSync(new URL("docs/asyncapi.yaml", root), "utf8"))).toEqual(contractDocument())
  })
})
