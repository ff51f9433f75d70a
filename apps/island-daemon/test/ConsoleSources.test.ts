import { execFile } from "node:child_process"
import { createRequire } from "node:module"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"

/**
 * The console's browser sources (`console/`, DOM types) are outside the repository's type check
 * (Node types): this checks them with their own tsconfig, so `pnpm test` catches a type error
 * that esbuild, which only strips types, would bundle.
 */
const tsc = createRequire(import.meta.url).resolve("typescript/lib/tsc.js")
const project = fileURLToPath(new URL("../console/tsconfig.json", import.meta.url))

describe("the console's browser sources", () => {
  it("type-check with the DOM types", async () => {
    const run = await promisify(execFile)(process.execPath, [tsc, "-p", project, "--noEmit"]).then(
      () => ({ ok: true, output: "" }),
      (error: { stdout?: string; stderr?: string }) => ({ ok: false, output: `${error.stdout ?? ""}${error.stderr ?? ""}` })
    )
    expect(run.output).toBe("")
    expect(run.ok).toBe(true)
  }, 60_000)
})
