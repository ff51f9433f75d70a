import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

// Properties of the checkout itself that a clean clone on another machine depends on.
const root = fileURLToPath(new URL("../../../", import.meta.url))

describe("the repository", () => {
  it("quotes every glob in the root scripts, so the shell cannot expand it into extra arguments", () => {
    const scripts = (JSON.parse(readFileSync(`${root}package.json`, "utf8")) as { scripts: Record<string, string> }).scripts
    for (const [name, command] of Object.entries(scripts)) {
      // Drop quoted parts; whatever glob characters remain would be expanded by sh.
      const unquoted = command.replace(/'[^']*'|"[^"]*"/g, "")
      expect({ name, globs: /[*?[]/.test(unquoted) }).toEqual({ name, globs: false })
    }
  })

  it("names no path outside the checkout (the CI check passes)", () => {
    const out = execFileSync("bash", [`${root}.ci/check-no-outside-paths`], { encoding: "utf8" })
    expect(out).toContain("no path outside the checkout is named")
  })

  it("ships the fixtures the test kits read", async () => {
    const { fixture } = await import("@microdcs/test-utils")
    expect(fixture("work-master-axle.json")).toHaveProperty("ID")
    expect(fixture("job-order.json")).toHaveProperty("JobOrderID")
  })
})
