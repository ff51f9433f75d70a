import { readdirSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

// The shared test helpers live once (test-utils, testkit); a package's test kit re-exports them
// instead of keeping its own copy that drifts (issue 10, item 7).
const packages = fileURLToPath(new URL("../../", import.meta.url))

const testSources = readdirSync(packages).flatMap((pkg) => {
  const dir = `${packages}${pkg}/test/`
  let names: Array<string> = []
  try {
    names = readdirSync(dir).filter((n) => n.endsWith(".ts"))
  } catch {
    return []
  }
  return names.map((name) => ({ pkg, file: `${pkg}/test/${name}`, text: readFileSync(`${dir}${name}`, "utf8") }))
})

const inTestUtils = ["eventually", "until", "startInstance", "startScoped"]
const inTestkit = ["untilJobOrderIs", "untilResponse", "jobOrderState", "responseOf", "snapshot", "testStore"]
// The store's own tests cannot use testkit (it depends on the store): only test-utils applies there.
const sharedNames = (pkg: string) => (pkg === "store" ? inTestUtils : [...inTestUtils, ...inTestkit])

describe("shared test helpers", () => {
  it("are defined in no package's tests, only re-exported", () => {
    const definitions = testSources.flatMap(({ pkg, file, text }) =>
      sharedNames(pkg).filter((name) => new RegExp(`^(export )?const ${name} = `, "m").test(text)).map((name) => `${file}: ${name}`)
    )
    expect(definitions).toEqual([])
  })

  it("build the store over the run's server in one place (testkit's testStore)", () => {
    const builders = testSources.filter(({ text }) => /storeLayer\(\{ url: inject\("valkeyUrl"\)/.test(text)).map(({ file }) => file)
    expect(builders).toEqual([])
  })

  it("start the broker of a test file in one place (testkit's mosquittoForFile)", () => {
    const starters = testSources.filter(({ text }) => /broker = await startMosquitto\(\)/.test(text)).map(({ file }) => file)
    expect(starters.filter((file) => !file.startsWith("embedded/"))).toEqual([])
  })
})
