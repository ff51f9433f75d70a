import { execFile } from "node:child_process"
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, describe, expect, it } from "vitest"
import { inject } from "vitest"
import { randomPrefix } from "@microdcs/test-utils"

/**
 * A team's project outside the workspace: it installs the packed keyschema, lua-scripts and store
 * (as a registry would serve them) beside its own `effect`, defines a key family and a script of
 * its own, type-checks that code against the packages' declarations and its own `effect` (strict,
 * library files checked too), and runs it against a real server. Proves the extension path works
 * from the published packages alone, with one copy of `effect`.
 */
const run = promisify(execFile)
const root = fileURLToPath(new URL("../../../", import.meta.url))
const packed = ["keyschema", "lua-scripts", "store"] as const
const work = mkdtempSync(join(tmpdir(), "microdcs-consumer-"))
afterAll(() => rmSync(work, { recursive: true, force: true }))

interface Manifest {
  name: string
  version: string
  files?: Array<string>
  scripts?: Record<string, string>
  dependencies?: Record<string, string>
  devDependencies?: Record<string, string>
}
const manifest = (dir: string): Manifest => JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Manifest

/** The package's own build (what `pnpm build` runs), through the workspace's tsup. */
const build = async (dir: string) => {
  const script = manifest(dir).scripts?.["build"] ?? ""
  const args = script.replace(/^tsup\s*/, "").split(/\s+/).filter(Boolean)
  await run(process.execPath, [join(root, "node_modules/tsup/dist/cli-default.js"), ...args], { cwd: dir, timeout: 180_000 })
}

/** What `pnpm pack` does: the `files`, with `workspace:` ranges replaced by the versions they name. */
const pack = async (dir: string): Promise<string> => {
  const pkg = manifest(dir)
  const stage = join(work, "stage", pkg.name.replace("/", "+"))
  mkdirSync(stage, { recursive: true })
  for (const entry of pkg.files ?? []) if (existsSync(join(dir, entry))) cpSync(join(dir, entry), join(stage, entry), { recursive: true })
  const dependencies = Object.fromEntries(
    Object.entries(pkg.dependencies ?? {}).map(([name, range]) =>
      range.startsWith("workspace:") ? [name, `^${manifest(join(root, "packages", name.replace("@microdcs/", ""))).version}`] : [name, range]
    )
  )
  const { devDependencies: _dev, scripts: _scripts, ...rest } = pkg
  writeFileSync(join(stage, "package.json"), JSON.stringify({ ...rest, dependencies }, null, 2))
  const { stdout } = await run("npm", ["pack", stage, "--pack-destination", work, "--loglevel=error"], { cwd: work })
  return join(work, stdout.trim().split("\n").pop()!)
}

const widgetScript = `--[[
  Counts one widget of a scope (the consumer's own script).

  KEYS[1] widget:count:{scope}   hash

  ARGV[1] widget id

  Replies:
    {"ok", count}
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua

local badKey, badType, wantType = wrongType({ { KEYS[1], 'hash' } })
if badKey then return { 'wrongtype', badKey, badType, wantType } end
return { 'ok', redis.call('HINCRBY', KEYS[1], ARGV[1], 1) }
`

const consumerMain = `import { Effect } from "effect"
import { defineKeyFamilies, KeyFamilyError, KeyPartError } from "@microdcs/keyschema"
import { defineScript, scriptHeaderProblems } from "@microdcs/lua-scripts"
import { Valkey, ValkeyLayer } from "@microdcs/store"

const widgetFamilies = defineKeyFamilies({ widgetCount: "widget:count:{scope}" })
const countWidget = defineScript({
  file: "count-widgets-1.lua",
  dir: new URL("./lua/", import.meta.url),
  keys: ["widgets"],
  encodeArgs: (id: string) => [id],
  decodeReply: (raw) => raw
})

const program = Effect.gen(function* () {
  const valkey = yield* Valkey
  const keys = valkey.keys.extend(widgetFamilies)
  if (keys instanceof KeyFamilyError) return yield* Effect.die(keys)
  const key = keys.key("widgetCount", { scope: "line-1" })
  if (key instanceof KeyPartError) return yield* Effect.die(key)
  const first = yield* valkey.script(countWidget, { widgets: key }, "w-1")
  const second = yield* valkey.script(countWidget, { widgets: key }, "w-1")
  return { key, first, second, parsed: keys.parse(key), headerProblems: scriptHeaderProblems(countWidget) }
})

const layer = ValkeyLayer.layer({ url: process.env.VALKEY_URL, prefix: process.env.PREFIX })
Effect.runPromise(Effect.scoped(Effect.provide(program, layer))).then((result) => console.log(JSON.stringify(result)))
`

/** The consumer's compiler settings: strict, Node's own module resolution, its libraries checked too. */
const consumerTsconfig = {
  compilerOptions: {
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    strict: true,
    exactOptionalPropertyTypes: true,
    noEmit: true,
    skipLibCheck: false,
    types: ["node"]
  },
  files: ["main.ts"]
}

describe("a consumer project outside the workspace", () => {
  it("installs the packed packages beside its own effect, and runs its own key family and script against a real server", async () => {
    for (const name of packed) await build(join(root, "packages", name))
    const tarballs = await Promise.all(packed.map((name) => pack(join(root, "packages", name))))
    const effectVersion = manifest(join(root, "node_modules/effect")).version
    const project = join(work, "consumer")
    mkdirSync(join(project, "lua"), { recursive: true })
    const dependencies: Record<string, string> = { effect: effectVersion, iovalkey: "~0.4.0", "@types/node": "^24.0.0" }
    packed.forEach((name, i) => (dependencies[`@microdcs/${name}`] = `file:${tarballs[i]}`))
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "widgets", private: true, type: "module", dependencies }, null, 2))
    writeFileSync(join(project, "lua", "count-widgets-1.lua"), widgetScript)
    writeFileSync(join(project, "main.ts"), consumerMain)
    writeFileSync(join(project, "tsconfig.json"), JSON.stringify(consumerTsconfig, null, 2))
    await run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], { cwd: project, timeout: 180_000 })

    // One copy of effect: the packages take the consumer's (a peer), none brings its own.
    for (const name of packed) expect(existsSync(join(project, "node_modules/@microdcs", name, "node_modules/effect"))).toBe(false)

    // Its code type-checks against the packed declarations and its own effect (the workspace's compiler).
    const typecheck = await run(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"], { cwd: project, timeout: 180_000 }).then(
      () => "",
      (error: { stdout?: string }) => error.stdout ?? String(error)
    )
    expect(typecheck).toBe("")

    const prefix = randomPrefix("consumer")
    const { stdout } = await run(process.execPath, ["main.ts"], { cwd: project, env: { ...process.env, VALKEY_URL: inject("valkeyUrl"), PREFIX: prefix }, timeout: 60_000 })
    const result = JSON.parse(stdout) as Record<string, unknown>
    expect(result).toEqual({
      key: `${prefix}:widget:count:line-1`,
      first: ["ok", 1],
      second: ["ok", 2],
      parsed: { family: "widgetCount", parts: { scope: "line-1" } },
      headerProblems: []
    })
  }, 420_000)
})
