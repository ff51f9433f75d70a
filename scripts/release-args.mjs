// The command line of `pnpm release` (scripts/release.mjs): its options, or every problem with them.
import { spawnSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"

export const USAGE = `usage: pnpm release [--publish] [--registry URL] [--tag TAG] [--out DIR] [--skip-build]

  Builds (pnpm build), versions the packages with the pending changesets (changeset version) and
  packs every public package into DIR. A dry run by default: it versions a temporary copy of the
  working tree, leaves the tree as it was, publishes nothing and needs no network.

  --publish      version the working tree itself (it must be clean), commit "Version packages",
                 publish each packed package the registry does not have yet (npm publish) and
                 tag it name@version; then push with git push --follow-tags
  --registry URL where to publish (default: RELEASE_REGISTRY, else npm's configured registry)
  --tag TAG      the npm dist-tag (default: latest)
  --out DIR      where the tarballs go (default: a new temporary folder); empty or new
  --skip-build   pack what the last pnpm build left`

/** npm's own registry setting (a local read, no network). */
const npmRegistry = () => spawnSync("npm", ["config", "get", "registry"], { encoding: "utf8" }).stdout?.trim() || "https://registry.npmjs.org/"

const isHttpUrl = (text) => {
  try {
    return ["http:", "https:"].includes(new URL(text).protocol)
  } catch {
    return false
  }
}

/** The value after a flag (`--flag value` or `--flag=value`), and how many arguments it took. */
const valueOf = (argv, i) => {
  const eq = argv[i].indexOf("=")
  if (eq >= 0) return { value: argv[i].slice(eq + 1), taken: 1 }
  const next = argv[i + 1]
  return next === undefined || next.startsWith("--") ? { value: undefined, taken: 1 } : { value: next, taken: 2 }
}

const FLAGS = new Set(["--publish", "--skip-build", "--help", "-h"])
const VALUES = new Set(["--registry", "--tag", "--out"])

/** The flags as given: `{ given, problems }`. */
const scan = (argv) => {
  const given = {}
  const problems = []
  for (let i = 0; i < argv.length; ) {
    const name = argv[i].split("=")[0]
    if (FLAGS.has(argv[i])) {
      given[argv[i]] = true
      i += 1
    } else if (VALUES.has(name)) {
      const { value, taken } = valueOf(argv, i)
      if (value === undefined || value === "") problems.push(`${name} needs a value`)
      else given[name] = value
      i += taken
    } else {
      problems.push(`unknown argument ${argv[i]}`)
      i += 1
    }
  }
  return { given, problems }
}

/** Problems with the values: a registry that is no http(s) URL, a dist-tag npm refuses, an output folder in use. */
const valueProblems = ({ registry, tag, out }) => [
  ...(isHttpUrl(registry) ? [] : [`the registry must be an http(s) URL: ${registry}`]),
  ...(/^[A-Za-z][A-Za-z0-9._-]*$/.test(tag) && !/^v?\d/.test(tag) ? [] : [`the tag must be a name such as latest or next (not a version): ${tag}`]),
  ...(existsSync(out) && readdirSync(out).length > 0 ? [`the output folder is not empty: ${out}`] : [])
]

/**
 * The release's options from its arguments and environment (RELEASE_REGISTRY), with the access of
 * the changesets config: `{ options, problems }`, every problem listed; nothing is changed here.
 */
export const parseReleaseArgs = (argv, env, root) => {
  const { given, problems } = scan(argv)
  const access = JSON.parse(readFileSync(join(root, ".changeset", "config.json"), "utf8")).access ?? "restricted"
  const options = {
    root,
    help: given["--help"] === true || given["-h"] === true,
    publish: given["--publish"] === true,
    skipBuild: given["--skip-build"] === true,
    registry: given["--registry"] ?? (env.RELEASE_REGISTRY || npmRegistry()),
    tag: given["--tag"] ?? "latest",
    out: resolve(given["--out"] ?? join(tmpdir(), `microdcs-release-${Date.now()}`)),
    access
  }
  return { options, problems: [...problems, ...valueProblems(options)] }
}
