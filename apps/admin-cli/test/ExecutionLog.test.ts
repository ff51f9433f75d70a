import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer, Result } from "effect"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { logValues, sampleExecution, sampleNode, writeExecution } from "@microdcs/execution-log/testing"
import {
  type ExecutionRecord,
  LogStorage,
  logStorageLayer,
  type NodeRecord,
  startEmbeddedPostgres,
  storageDatabase,
  type EmbeddedPostgres
} from "@microdcs/execution-log"
import { canonicalRecipeDigest, ExecutionLogStore, storeLayer, WorkMasterDao } from "@microdcs/store"
import { validateRecipe } from "@microdcs/sfc"
import { randomPrefix } from "@microdcs/test-utils"
import { type Cli, makeCli } from "./Cli.js"
import { brokenWorkMaster, recipe, SCOPE, workMaster } from "./Seed.js"

// `executions tree` and `recipes list` against one island: a job with two executions (the newer
// with a simultaneous branch and a running child) in Valkey, one execution that retention moved
// to storage only (an embedded PGlite standing in for PG_URL), and a few work masters.
const url = inject("valkeyUrl")
const prefix = randomPrefix("cli-execlog")
let cli: Cli
let pg: EmbeddedPostgres

const execution = (executionId: string, lastSeq: number, more: Partial<ExecutionRecord> = {}): ExecutionRecord =>
  sampleExecution(executionId, lastSeq, { jobId: "jo-7", scope: SCOPE, workMasterId: "wm-1", recipeDigest: "b".repeat(64), closedAt: 1_700_000_005_000, ...more })

/** Nodes 10 ms apart that last 5 ms each (the table shows their durations). */
const node = (seq: number, more: Partial<NodeRecord> = {}): NodeRecord =>
  sampleNode(seq, { openedAt: 1_700_000_000_000 + seq * 10, closedAt: 1_700_000_000_000 + seq * 10 + 5, ...more })

const world = () =>
  Layer.mergeAll(ExecutionLogStore.Default, WorkMasterDao.Default, logStorageLayer.pipe(Layer.provide(storageDatabase(pg.url)))).pipe(
    Layer.provideMerge(storeLayer({ url, prefix }))
  )

const child = "jo-7.e2.FitAndQa.0.1"

beforeAll(async () => {
  pg = await startEmbeddedPostgres()
  cli = await makeCli(url, prefix)
  await Effect.runPromise(
    Effect.gen(function* () {
      yield* writeExecution(execution("jo-7.e1", 1, { openedAt: 1_699_000_000_000, status: "aborted" }), [node(0, { name: "Init" }), node(1, { kind: "error", name: "Positioning", detail: { error: "station gone" } })])
      yield* writeExecution(execution("jo-7.e2", 2, { openedAt: 1_700_000_000_000 }), [
        node(0, { name: "Init" }),
        node(1, { kind: "branch", name: "FitAndQa", children: [child] }),
        node(2, { name: "Complete" })
      ])
      yield* writeExecution(execution(child, 0, { parent: { executionId: "jo-7.e2", seq: 1 }, status: "running", closedAt: undefined }), [
        node(0, { kind: "action", name: "press", closedAt: undefined })
      ])
      // Only in storage: retention removed it from Valkey after the storage role committed it.
      const storage = yield* LogStorage
      yield* storage.upsert(yield* logValues(execution("jo-9.e1", 0, { jobId: "jo-9" }), [node(0, { name: "Init" })]))

      const workMasters = yield* WorkMasterDao
      yield* workMasters.put({ id: "wm-1", scope: SCOPE, doc: JSON.stringify(workMaster("wm-1")), expectedVersion: -1 })
      yield* workMasters.put({ id: "wm-plain", scope: SCOPE, doc: JSON.stringify({ ID: "wm-plain" }), expectedVersion: -1 })
      yield* workMasters.put({ id: "wm-2", scope: "line-9", doc: JSON.stringify(workMaster("wm-2")), expectedVersion: -1 })
    }).pipe(Effect.provide(world()))
  )
}, 60_000)

afterAll(async () => {
  cli?.dispose()
  await pg?.stop()
})

/** The lines of a table, each split on runs of two or more blanks, leading blanks kept as the first cell's indentation. */
const firstColumn = (text: string) =>
  text
    .split("\n\n")[1]!
    .trimEnd()
    .split("\n")
    .map((line) => /^\s*\S+(?: \S+)*/.exec(line)![0])

describe("executions tree", () => {
  it("an execution id: its nodes in run order and the branch's child indented under its node, as a table and as JSON", async () => {
    const [table, json] = await Promise.all([cli.run(["executions", "tree", "jo-7.e2"]), cli.json(["executions", "tree", "jo-7.e2"])])
    expect(table.code, table.stderr).toBe(0)
    expect(firstColumn(table.stdout)).toEqual([
      "EXECUTION / NODE",
      "execution jo-7.e2",
      "  0 step Init",
      "  1 branch FitAndQa",
      `    execution ${child}`,
      "      0 action press",
      "  2 step Complete"
    ])
    // The running child shows the node it is in.
    expect(table.stdout).toMatch(/0 action press\s+open/)
    expect(json).toMatchObject({ id: "jo-7.e2", resolvedAs: "execution", executions: ["jo-7.e2"], storage: "valkey-only" })
    expect(json.rows.map((r: { depth: number; type: string }) => [r.type, r.depth])).toEqual([
      ["execution", 0],
      ["node", 1],
      ["node", 1],
      ["execution", 2],
      ["node", 3],
      ["node", 1]
    ])
    expect(json.rows[0].record).toMatchObject({ jobId: "jo-7", recipeDigest: "b".repeat(64) })
  })

  it("a job id: the trees of its executions, oldest first", async () => {
    const json = await cli.json(["executions", "tree", "jo-7"])
    expect(json).toMatchObject({ id: "jo-7", resolvedAs: "job", executions: ["jo-7.e1", "jo-7.e2"] })
    expect(json.rows.filter((r: { depth: number }) => r.depth === 0).map((r: { executionId: string }) => r.executionId)).toEqual(["jo-7.e1", "jo-7.e2"])
  })

  it("storage at PG_URL for what retention removed; without PG_URL a miss says Valkey only; unknown is exit 3", async () => {
    const stored = await cli.run(["executions", "tree", "jo-9", "--json"], { PG_URL: pg.url })
    expect(stored.code, stored.stderr).toBe(0)
    expect(JSON.parse(stored.stdout)).toMatchObject({ resolvedAs: "job", executions: ["jo-9.e1"], storage: "postgres" })
    const byExecution = await cli.run(["executions", "tree", "jo-9.e1", "--json"], { PG_URL: pg.url })
    expect(JSON.parse(byExecution.stdout).rows).toHaveLength(2)

    const valkeyOnly = await cli.run(["executions", "tree", "jo-9"])
    expect(valkeyOnly.code).toBe(3)
    expect(valkeyOnly.stderr).toContain("no execution or job jo-9 in the execution log (Valkey only: no storage database configured)")
    const unknown = await cli.run(["executions", "tree", "nobody", "--json"], { PG_URL: pg.url })
    expect(unknown.code).toBe(3)
    expect(JSON.parse(unknown.stderr)).toMatchObject({ error: "Missing", exitCode: 3 })
  })

  it("an unreachable PG_URL is exit 4, naming the storage", async () => {
    const run = await cli.run(["executions", "tree", "jo-7"], { PG_URL: "postgres://postgres@127.0.0.1:1/postgres" })
    expect(run.code, run.stderr).toBe(4)
    expect(run.stderr).toContain("PG_URL")
  })
})

describe("recipes list", () => {
  const digest = canonicalRecipeDigest(Result.getOrThrow(validateRecipe(recipe)))

  it("every scope's recipes with their canonical SHA-256 digests; work masters without a recipe are left out", async () => {
    const [table, json] = await Promise.all([cli.run(["recipes", "list"]), cli.json(["recipes", "list"])])
    expect(table.code, table.stderr).toBe(0)
    expect(json.recipes).toEqual([
      { scope: SCOPE, workMasterId: "wm-1", version: 1, digest, valid: true, pinnedDigest: null },
      { scope: "line-9", workMasterId: "wm-2", version: 1, digest, valid: true, pinnedDigest: null }
    ])
    expect(table.stdout.split("\n")[0]).toMatch(/^SCOPE\s+WORK MASTER\s+VERSION\s+DIGEST \(SHA-256\)\s+PIN$/)
    expect(table.stdout).toContain(digest)
    expect((await cli.json(["recipes", "list", "--scope", "line-9"])).recipes.map((r: { workMasterId: string }) => r.workMasterId)).toEqual(["wm-2"])
  })

  it("RECIPE_DIGESTS pins are shown beside the digest; a malformed one is a usage error", async () => {
    const other = "c".repeat(64)
    const run = await cli.run(["recipes", "list"], { RECIPE_DIGESTS: `wm-1=${digest.toUpperCase()}, wm-2=${other}` })
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toMatch(/wm-1 .*pinned, matches/)
    expect(run.stdout).toContain(`pinned to ${other}: MISMATCH`)
    const bad = await cli.run(["recipes", "list"], { RECIPE_DIGESTS: "wm-1=abc" })
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain("RECIPE_DIGESTS")
    expect(bad.stderr).toContain("not a SHA-256 digest")
  })
})

describe("recipes digest", () => {
  const files = mkdtempSync(join(tmpdir(), "microdcs-admin-recipes-"))
  const file = (name: string, content: unknown) => {
    const path = join(files, name)
    writeFileSync(path, JSON.stringify(content, null, 2))
    return path
  }

  it("prints the digest the island computes (defaults filled in), not the hash of the file as written", async () => {
    const catalogued = (await cli.json(["recipes", "list", "--scope", SCOPE])).recipes.find((r: { workMasterId: string }) => r.workMasterId === "wm-1").digest
    // The file as written leaves Initial and Priority out: its own hash is not what the island pins.
    expect(canonicalRecipeDigest(recipe)).not.toBe(catalogued)
    const asWorkMaster = file("wm-1.json", workMaster("wm-1"))
    const bare = file("recipe.json", { Actions: recipe.Actions, Transitions: recipe.Transitions, Steps: recipe.Steps })
    const [table, json, fromBare] = await Promise.all([
      cli.run(["recipes", "digest", asWorkMaster]),
      cli.json(["recipes", "digest", asWorkMaster]),
      cli.json(["recipes", "digest", bare])
    ])
    expect(table.code, table.stderr).toBe(0)
    expect(table.stdout.trim()).toBe(`${catalogued}  ${asWorkMaster}`)
    expect(json).toMatchObject({ file: asWorkMaster, workMasterId: "wm-1", recipe: "valid", digest: catalogued })
    expect(fromBare).toMatchObject({ workMasterId: null, digest: catalogued })
  })

  it("an invalid recipe lists its problems (exit 1); a file without a recipe is exit 2", async () => {
    const broken = await cli.run(["recipes", "digest", file("broken.json", brokenWorkMaster("wm-b"))])
    expect(broken.code).toBe(1)
    expect(broken.stdout).toMatch(/^RULE\s+PATH\s+PROBLEM$/m)
    expect(broken.stdout).toContain("Actions[0].Qualifier")
    const none = await cli.run(["recipes", "digest", file("plain.json", { ID: "wm-plain", Description: "no recipe" })])
    expect(none.code).toBe(2)
    expect(none.stderr).toContain("holds no recipe")
  })
})
