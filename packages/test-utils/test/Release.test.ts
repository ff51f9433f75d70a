import { spawn, spawnSync } from "node:child_process"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"

// `pnpm release` (scripts/release.mjs) on a small workspace of its own. The dry run versions a copy
// with the pending changeset, packs the public packages at their new versions (an unchanged
// dependent with its workspace range on the new one), leaves the workspace as it was and asks no
// registry (the one given listens nowhere). --publish versions and commits the workspace, publishes
// to a registry on a loopback port (a few lines of HTTP here, npm's client talking to it) what it
// does not have yet, dependencies first, and tags each. Bad arguments are all reported, and nothing runs.

const script = fileURLToPath(new URL("../../../scripts/release.mjs", import.meta.url))
const changesetConfig = readFileSync(new URL("../../../.changeset/config.json", import.meta.url), "utf8")
const nowhere = "http://127.0.0.1:9/"

const trees: Array<string> = []
afterAll(() => trees.forEach((tree) => rmSync(tree, { recursive: true, force: true })))

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`

/** A workspace: a library with a pending minor changeset, an app that depends on it, a private package. */
const workspace = (): string => {
  const root = mkdtempSync(join(tmpdir(), "release-test-"))
  trees.push(root)
  const files: Record<string, string> = {
    "package.json": json({ name: "fixture-root", private: true }),
    "pnpm-workspace.yaml": "packages:\n  - packages/*\n",
    ".changeset/config.json": json({ ...JSON.parse(changesetConfig), ignore: [] }),
    ".changeset/lib-feature.md": `---\n"@fixture/lib": minor\n---\n\nA feature of the library.\n`,
    "packages/lib/package.json": json({ name: "@fixture/lib", version: "1.0.0", type: "module", files: ["index.js"] }),
    "packages/lib/index.js": "export const lib = 1\n",
    "packages/app/package.json": json({ name: "@fixture/app", version: "1.0.0", type: "module", files: ["index.js"], dependencies: { "@fixture/lib": "workspace:^" } }),
    "packages/app/index.js": "export { lib } from \"@fixture/lib\"\n",
    "packages/hidden/package.json": json({ name: "@fixture/hidden", version: "1.0.0", private: true })
  }
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  return root
}

/** Every file under `root` with its text. */
const treeContents = (root: string): Record<string, string> =>
  Object.fromEntries(
    readdirSync(root, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => join(e.parentPath, e.name))
      .map((file) => [relative(root, file), readFileSync(file, "utf8")])
  )

/** Runs the release script in `cwd`; asynchronously, so this process's registry can answer it meanwhile. */
const release = (cwd: string, args: ReadonlyArray<string>, env: Readonly<Record<string, string>> = {}): Promise<{ status: number | null; out: string }> =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [script, ...args], { cwd, env: { ...process.env, RELEASE_REGISTRY: "", ...env }, stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    child.stdout.on("data", (chunk: Buffer) => void (out += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => void (out += chunk.toString()))
    const timer = setTimeout(() => child.kill("SIGKILL"), 240_000)
    child.once("close", (status) => {
      clearTimeout(timer)
      resolve({ status, out })
    })
  })

/**
 * A registry on a loopback port that knows what was published to it: a package's document (404
 * before its first version) and a publish (PUT of the document with the new version).
 */
const fakeRegistry = async () => {
  const packages = new Map<string, { name: string; versions: Record<string, unknown>; "dist-tags": Record<string, string> }>()
  const published: Array<string> = []
  const server: Server = createServer((req, res) => {
    const name = decodeURIComponent((req.url ?? "/").slice(1))
    let body = ""
    req.on("data", (chunk: Buffer) => void (body += chunk.toString()))
    req.on("end", () => {
      if (req.method === "PUT") {
        const doc = JSON.parse(body) as { versions: Record<string, unknown>; "dist-tags": Record<string, string> }
        const known = packages.get(name) ?? { name, versions: {}, "dist-tags": {} }
        packages.set(name, { name, versions: { ...known.versions, ...doc.versions }, "dist-tags": { ...known["dist-tags"], ...doc["dist-tags"] } })
        published.push(...Object.keys(doc.versions).map((v) => `${name}@${v}`))
        res.writeHead(201, { "content-type": "application/json" }).end('{"ok":true}')
      } else if (packages.has(name)) res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(packages.get(name)))
      else res.writeHead(404, { "content-type": "application/json" }).end('{"error":"Not found"}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
  return { url, published, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

const git = (cwd: string, ...args: ReadonlyArray<string>) => spawnSync("git", [...args], { cwd, encoding: "utf8", env: { ...process.env, ...gitPerson } }).stdout.trim()
const gitPerson = { GIT_AUTHOR_NAME: "release test", GIT_AUTHOR_EMAIL: "release@test.invalid", GIT_COMMITTER_NAME: "release test", GIT_COMMITTER_EMAIL: "release@test.invalid" }

/** The package.json inside a tarball. */
const manifestIn = (tarball: string) => JSON.parse(spawnSync("tar", ["-xzOf", tarball, "package/package.json"], { encoding: "utf8" }).stdout)

describe("pnpm release (scripts/release.mjs)", () => {
  it("dry run: packs the public packages at their new versions, leaves the workspace as it was, needs no registry", async () => {
    const root = workspace()
    const before = treeContents(root)
    const out = join(root, "..", `${relative(tmpdir(), root)}-out`)
    trees.push(out)
    const { status, out: printed } = await release(root, ["--skip-build", "--registry", nowhere, "--out", out])
    expect(status, printed).toBe(0)
    expect(printed).toContain("dry run")
    expect(readdirSync(out).sort()).toEqual(["fixture-app-1.0.0.tgz", "fixture-lib-1.1.0.tgz"])
    expect(manifestIn(join(out, "fixture-app-1.0.0.tgz")).dependencies).toEqual({ "@fixture/lib": "^1.1.0" })
    expect(treeContents(root)).toEqual(before)
  }, 200_000)

  it("--publish: versions and commits the workspace, publishes what the registry lacks (dependencies first), tags it; again: nothing new", async () => {
    const root = workspace()
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "a workspace")
    const registry = await fakeRegistry()
    try {
      // npm publishes only with a token for the registry: one in a user config of this test's own.
      const npmrc = join(root, "..", `${relative(tmpdir(), root)}.npmrc`)
      trees.push(npmrc)
      writeFileSync(npmrc, `${registry.url.replace(/^http:/, "")}:_authToken=release-test\n`)
      const env = { ...gitPerson, npm_config_userconfig: npmrc }
      const first = await release(root, ["--publish", "--skip-build", "--registry", registry.url], env)
      expect(first.status, first.out).toBe(0)
      expect(registry.published).toEqual(["@fixture/lib@1.1.0", "@fixture/app@1.0.0"])
      expect(git(root, "log", "--format=%s")).toBe("Version packages\na workspace")
      expect(git(root, "tag", "--list").split("\n").sort()).toEqual(["@fixture/app@1.0.0", "@fixture/lib@1.1.0"])
      expect(git(root, "status", "--porcelain")).toBe("")
      const again = await release(root, ["--publish", "--skip-build", "--registry", registry.url], env)
      expect(again.status, again.out).toBe(0)
      expect(again.out).toContain("already in the registry")
      expect(registry.published).toHaveLength(2)
    } finally {
      await registry.close()
    }
  }, 300_000)

  it("--publish refuses a working tree with changes", async () => {
    const root = workspace()
    git(root, "init", "-q")
    const { status, out } = await release(root, ["--publish", "--skip-build", "--registry", nowhere])
    expect(status).toBe(2)
    expect(out).toContain("--publish needs a clean working tree")
  })

  it("reports every bad argument at once, and does nothing", async () => {
    const root = workspace()
    const before = treeContents(root)
    const { status, out } = await release(root, ["--registry", "ftp://example", "--tag", "1.2.3", "--bogus", "--out", root])
    expect(status).toBe(2)
    for (const problem of ["unknown argument --bogus", "the registry must be an http(s) URL", "the tag must be a name", "the output folder is not empty"]) {
      expect(out).toContain(problem)
    }
    expect(treeContents(root)).toEqual(before)
  })
})
