import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"
import { type Cli, makeCli } from "./Cli.js"
import { OTHER_SCOPE, SCOPE, seedIsland } from "./Seed.js"

// `joborders search` against the seeded island (read only: the tests share it).
const url = inject("valkeyUrl")
const prefix = randomPrefix("cli-search")
let cli: Cli

beforeAll(async () => {
  ;[cli] = await Promise.all([makeCli(url, prefix), seedIsland(url, prefix)])
})
afterAll(() => cli?.dispose())

interface Found {
  readonly jobOrders: ReadonlyArray<{ scope: string; id: string; state: string; priority: number; createdMs: number | null }>
  readonly total: number
  readonly totalExact: boolean
  readonly next: string | null
}

describe("joborders search", () => {
  it("searches every scope by default, with a total; a retired job order is not listed", async () => {
    const all = await cli.json<Found>(["joborders", "search"])
    expect(all.jobOrders.map((j) => `${j.scope}/${j.id}`).sort()).toEqual([`${SCOPE}/jo-1`, `${SCOPE}/jo-2`, `${SCOPE}/jo-4`, `${OTHER_SCOPE}/jo-9`])
    expect(all).toMatchObject({ total: 4, totalExact: true, next: null })
    const table = await cli.run(["joborders", "search", "--all-scopes"])
    expect(table.code).toBe(0)
    expect(table.stdout).toContain("total: 4")
    expect(table.stdout.split("\n")[0]).toMatch(/^SCOPE\s+ID\s+STATE\s+PRIORITY\s+WORK MASTER\s+CREATED\s+ENDED\s+ERROR/)
  })

  it("filters by state, scope, id prefix and priority; --count gives the total alone", async () => {
    const states = await cli.json<Found>(["joborders", "search", "--scope", SCOPE, "--state", "Running,Ended_Completed"])
    expect(states.jobOrders.map((j) => j.id).sort()).toEqual(["jo-2", "jo-4"])
    const prefixed = await cli.json<Found>(["joborders", "search", "--id-prefix", "jo-9"])
    expect(prefixed.jobOrders).toMatchObject([{ scope: OTHER_SCOPE, id: "jo-9", state: "NotAllowedToStart_Ready", priority: 3 }])
    const priority = await cli.json<Found>(["joborders", "search", "--priority-min", "3", "--priority-max", "6"])
    expect(priority.jobOrders.map((j) => j.id).sort()).toEqual(["jo-1", "jo-9"])
    const created = await cli.json<Found>(["joborders", "search", "--created-from", "2020-01-01T00:00:00Z", "--created-to", String(Date.now() + 60_000)])
    expect(created.total).toBe(4)
    expect(await cli.json(["joborders", "search", "--state", "Running", "--count"])).toEqual({ total: 1, totalExact: true })
  })

  it("pages past --limit with --after", async () => {
    const seen: Array<string> = []
    let after: string | null = null
    for (let page = 0; page < 10; page++) {
      const found: Found = await cli.json<Found>(["joborders", "search", "--limit", "1", ...(after === null ? [] : ["--after", after])])
      seen.push(...found.jobOrders.map((j) => j.id))
      after = found.next
      if (after === null) break
    }
    expect(seen.sort()).toEqual(["jo-1", "jo-2", "jo-4", "jo-9"])
    const first = await cli.run(["joborders", "search", "--limit", "1"])
    expect(first.stdout).toMatch(/more: --after \S+/)
  })

  it("refuses bad flags listing every problem, and a cursor of another search", async () => {
    const bad = await cli.run(["joborders", "search", "--state", "Runing", "--created-from", "yesterday", "--limit", "0", "--priority-min", "x"])
    expect(bad.code).toBe(2)
    for (const word of ["Runing", "--created-from", "limit", "--priority-min"]) expect(bad.stderr).toContain(word)
    const first = await cli.json<Found>(["joborders", "search", "--limit", "1"])
    const other = await cli.run(["joborders", "search", "--state", "Running", "--after", first.next!])
    expect(other.code).toBe(2)
    expect(other.stderr).toContain("another search")
  })
})
