import { describe, expect, it } from "vitest"
import { hoistGlobalFlags } from "../src/GlobalFlags.js"

const argv = (...args: Array<string>) => ["node", "main.js", ...args]

describe("hoistGlobalFlags", () => {
  it("moves --json, --url and --prefix in front of the subcommands, keeping the rest in order", () => {
    expect(hoistGlobalFlags(argv("joborders", "show", "jo-1", "--json", "--url", "redis://h:1", "--prefix=p"))).toEqual({
      argv: argv("--json", "--url", "redis://h:1", "--prefix", "p", "joborders", "show", "jo-1"),
      json: true
    })
  })

  it("leaves everything after -- alone and reports no --json when there is none", () => {
    expect(hoistGlobalFlags(argv("config", "acceptance", "set", "--scope", "s", "--", "--json"))).toEqual({
      argv: argv("config", "acceptance", "set", "--scope", "s", "--", "--json"),
      json: false
    })
  })

  it("drops a leading -- (as `pnpm start -- ...` passes it)", () => {
    expect(hoistGlobalFlags(argv("--", "scopes", "list", "--json")).argv).toEqual(argv("--json", "scopes", "list"))
  })

  it("keeps a trailing value flag without a value where it is, for the parser to reject", () => {
    expect(hoistGlobalFlags(argv("scopes", "list", "--url")).argv).toEqual(argv("scopes", "list", "--url"))
  })
})
