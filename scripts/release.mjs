#!/usr/bin/env node
// `pnpm release`: builds, versions the packages with the pending changesets (`changeset version`)
// and packs every public package; with --publish it also publishes them to a registry. A dry run
// (the default) versions a temporary copy of the working tree, so the tree is left as it was, and
// needs no network. Run from the workspace root (pnpm does). docs/platform/README.md, "Releasing".
import { spawnSync } from "node:child_process"
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { basename, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { workspacePackages } from "../.ci/lib/sources.mjs"
import { parseReleaseArgs, USAGE } from "./release-args.mjs"

/** This repository's own tools (changesets), whatever workspace the release runs on. */
const toolsRoot = fileURLToPath(new URL("..", import.meta.url))
const changesetBin = join(toolsRoot, "node_modules", "@changesets", "cli", "bin.js")

/** Runs a command, its output on the console; a failure ends the release with its exit status. */
const run = (command, args, cwd, what = `${command} ${args.join(" ")}`) => {
  const result = spawnSync(command, args, { cwd, stdio: "inherit" })
  if (result.status !== 0) fail(`${what} failed (exit ${result.status ?? result.signal})`, result.status ?? 1)
}

/** Runs a command for its output: `{ status, stdout, stderr }`. */
const read = (command, args, cwd) => {
  const result = spawnSync(command, args, { cwd, encoding: "utf8" })
  return { status: result.status ?? 1, stdout: result.stdout ?? "", stderr: result.stderr ?? "" }
}

const fail = (message, status = 1) => {
  console.error(`release: ${message}`)
  process.exit(status)
}

/** The packages the release publishes: not private, not ignored by the changesets config; dependencies first. */
const publicPackages = (root) => {
  const ignored = new Set(JSON.parse(readFileSync(join(root, ".changeset", "config.json"), "utf8")).ignore ?? [])
  const packages = workspacePackages(root).filter(({ json }) => json.private !== true && !ignored.has(json.name))
  const byName = new Map(packages.map((pkg) => [pkg.json.name, pkg]))
  const ordered = []
  const visit = (pkg) => {
    if (ordered.includes(pkg)) return
    const deps = Object.keys({ ...pkg.json.dependencies, ...pkg.json.peerDependencies }).filter((d) => byName.has(d))
    for (const dep of deps) visit(byName.get(dep))
    ordered.push(pkg)
  }
  for (const pkg of packages) visit(pkg)
  return ordered.map(({ dir, json }) => ({ dir, name: json.name, version: json.version }))
}

/** A copy of the working tree as it is (edits and new files too) without node_modules and .git; the tools linked in. */
const copyOfTree = (root) => {
  const copy = mkdtempSync(join(tmpdir(), "microdcs-release-tree-"))
  cpSync(root, copy, { recursive: true, filter: (src) => !["node_modules", ".git"].includes(basename(src)) })
  symlinkSync(join(toolsRoot, "node_modules"), join(copy, "node_modules"))
  return copy
}

/** The changesets not yet turned into versions. */
const pendingChangesets = (root) => readdirSync(join(root, ".changeset")).filter((f) => f.endsWith(".md") && f !== "README.md")

/** Versions `root` with the pending changesets (if any) and packs its public packages into `out`: what each became. */
const versionAndPack = (root, out, before) => {
  if (pendingChangesets(root).length > 0) run(process.execPath, [changesetBin, "version"], root, "changeset version")
  else console.log("no pending changesets: the versions stay as they are")
  mkdirSync(out, { recursive: true })
  return publicPackages(root).map(({ dir, name, version }) => {
    const packed = new Set(readdirSync(out))
    const pack = read("pnpm", ["pack", "--pack-destination", out], join(root, dir))
    if (pack.status !== 0) fail(`pnpm pack (${name}) failed:\n${pack.stdout}${pack.stderr}`)
    const tarball = readdirSync(out).find((file) => !packed.has(file) && file.endsWith(".tgz"))
    return { name, from: before.get(name), version, tarball: join(out, tarball ?? "?") }
  })
}

const report = (releases, options, published = new Map()) => {
  const width = Math.max(...releases.map((r) => r.name.length))
  for (const r of releases) {
    const change = r.from === r.version ? `${r.version} (unchanged)` : `${r.from} -> ${r.version}`
    console.log(`  ${r.name.padEnd(width)}  ${change.padEnd(24)} ${published.get(r.name) ?? basename(r.tarball)}`)
  }
  console.log(`registry ${options.registry}, tag ${options.tag}, access ${options.access}; tarballs in ${options.out}`)
}

/** The registry already has this version (`npm view`); any other failure than "not found" ends the release. */
const inRegistry = (release, options) => {
  const view = read("npm", ["view", `${release.name}@${release.version}`, "version", "--registry", options.registry], options.root)
  if (view.status === 0) return view.stdout.trim() === release.version
  if (/E404|404 Not Found/.test(view.stderr)) return false
  return fail(`npm view ${release.name}@${release.version} failed: ${view.stderr.trim()}`)
}

const publishAll = (releases, options) => {
  const outcome = new Map()
  for (const release of releases) {
    if (inRegistry(release, options)) {
      outcome.set(release.name, "already in the registry")
      continue
    }
    const args = ["publish", release.tarball, "--registry", options.registry, "--tag", options.tag, "--access", options.access]
    run("npm", args, options.root, `npm publish ${release.name}@${release.version}`)
    run("git", ["tag", `${release.name}@${release.version}`], options.root)
    outcome.set(release.name, "published, tagged")
  }
  return outcome
}

const dryRun = (options, before) => {
  const copy = copyOfTree(options.root)
  try {
    const releases = versionAndPack(copy, options.out, before)
    console.log("release (dry run: the working tree is unchanged, nothing is published):")
    report(releases, options)
    console.log("`pnpm release --publish` versions the tree, commits \"Version packages\", publishes these and tags them.")
  } finally {
    rmSync(copy, { recursive: true, force: true })
  }
}

const publish = (options, before) => {
  const status = read("git", ["status", "--porcelain"], options.root)
  if (status.status !== 0 || status.stdout.trim() !== "") fail(`--publish needs a clean working tree (commit or stash first):\n${status.stdout}${status.stderr}`, 2)
  const releases = versionAndPack(options.root, options.out, before)
  if (read("git", ["status", "--porcelain"], options.root).stdout.trim() !== "") {
    run("git", ["add", "-A"], options.root)
    run("git", ["commit", "-q", "-m", "Version packages"], options.root)
  }
  const outcome = publishAll(releases, options)
  console.log("released:")
  report(releases, options, outcome)
  console.log("push the commit and its tags: git push --follow-tags")
}

const main = () => {
  const root = resolve(process.cwd())
  const { options, problems } = parseReleaseArgs(process.argv.slice(2), process.env, root)
  if (options.help) return console.log(USAGE)
  if (!existsSync(join(root, "pnpm-workspace.yaml"))) problems.push(`${root} is not a workspace root (no pnpm-workspace.yaml): run it from the root`)
  if (problems.length > 0) fail(`${problems.join("\n  ")}\n\n${USAGE}`, 2)
  const before = new Map(publicPackages(root).map((p) => [p.name, p.version]))
  if (!options.skipBuild) run("pnpm", ["build"], root)
  return options.publish ? publish(options, before) : dryRun(options, before)
}

main()
