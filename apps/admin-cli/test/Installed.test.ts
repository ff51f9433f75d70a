import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { type DeployedPackage, deployPackage, randomPrefix } from "@microdcs/test-utils"
import { childEnv, exec } from "./Cli.js"
import { OTHER_SCOPE, SCOPE, seedIsland } from "./Seed.js"

/**
 * The CLI as `npm install @microdcs/admin-cli` gives it: built, then deployed into a temporary
 * folder that holds only what the package publishes and its production dependencies
 * (`pnpm deploy --prod --offline`, from the local store). Its `bin` runs there by its shebang.
 */

const ROOT = fileURLToPath(new URL("../../../", import.meta.url))
const url = inject("valkeyUrl")
const prefix = randomPrefix("cli-installed")

let deployed: DeployedPackage
beforeAll(async () => {
  ;[deployed] = await Promise.all([deployPackage(ROOT, "@microdcs/admin-cli"), seedIsland(url, prefix)])
}, 600_000)
afterAll(() => deployed?.remove())

const run = (args: ReadonlyArray<string>) => exec(join(deployed.dir, "dist", "microdcs-admin.mjs"), args, childEnv({ VALKEY_URL: url, VALKEY_PREFIX: prefix }), deployed.dir)

describe("the installed CLI (pnpm deploy of the package)", () => {
  it("holds only the bundle and the package's own files", () => {
    expect(deployed.files).toEqual(["README.md", "dist/microdcs-admin.mjs", "dist/microdcs-admin.mjs.map", "package.json"])
  })

  it("answers --help, and reads the island's scopes from Valkey", async () => {
    const help = await run(["--help"])
    expect(help.code, help.stderr).toBe(0)
    expect(help.stdout).toContain("microdcs-admin <subcommand>")
    const scopes = await run(["scopes", "list", "--json"])
    expect(scopes.code, scopes.stderr).toBe(0)
    expect(JSON.parse(scopes.stdout).scopes).toMatchObject([
      { scope: SCOPE, jobOrders: 3 },
      { scope: OTHER_SCOPE, jobOrders: 1 }
    ])
  }, 120_000)
})
