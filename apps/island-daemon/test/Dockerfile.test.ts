import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { BIN } from "../src/build/bundle.js"
import { dockerfileSteps, healthCheckCommand, runtimeSteps } from "./Dockerfile.js"

/**
 * The repository's Dockerfile, read (CI builds it where a container builder is usable,
 * `.ci/build-image`): a runtime stage from Node 24 with only the deployed daemon, run as a user
 * that is not root, with the bin's Node option, a health check on /readyz and settings the daemon
 * reads. `Installed.test.ts` runs its health check command against an installed daemon.
 */

const dockerignore = readFileSync(new URL("../../../.dockerignore", import.meta.url), "utf8")
const example = readFileSync(new URL("../../../deploy/systemd/microdcs-island.env.example", import.meta.url), "utf8")

const steps = dockerfileSteps()
const runtime = runtimeSteps(steps)
const arg = (name: string) => steps.find((s) => s.op === "ARG" && s.args.startsWith(`${name}=`))?.args.split("=")[1]
/** Docker's reference to the build argument (not a template literal). */
const NODE_IMAGE = "$" + "{NODE_IMAGE}"

describe("the Dockerfile", () => {
  it("builds in the repository and runs from a Node 24 image with only the deployed daemon", () => {
    expect(arg("NODE_IMAGE")).toMatch(/^node:24-/)
    expect(steps.filter((s) => s.op === "FROM").map((s) => s.args)).toEqual([`${NODE_IMAGE} AS build`, `${NODE_IMAGE} AS runtime`])
    const build = steps.filter((s) => s.op === "RUN").map((s) => s.args).join(" ")
    expect(build).toContain("pnpm install --frozen-lockfile")
    expect(build).toContain("pnpm --filter @microdcs/island-daemon deploy --prod /out/island-daemon")
    expect(runtime.filter((s) => s.op === "COPY").map((s) => s.args)).toEqual(["--from=build /out/island-daemon ./"])
    expect(dockerignore.split("\n")).toEqual(expect.arrayContaining(["**/node_modules", "**/dist", ".git"]))
  })

  it("runs the bin with its Node option as a user that is not root, with a health check on /readyz", () => {
    expect(runtime.find((s) => s.op === "USER")?.args).toBe("node")
    expect(JSON.parse(runtime.find((s) => s.op === "ENTRYPOINT")?.args ?? "[]")).toEqual(["node", "--no-memory-protection-keys", BIN])
    expect(healthCheckCommand(runtime).join(" ")).toMatch(/^node -e .*\/readyz/)
  })

  it("sets only variables the daemon reads", () => {
    const listed = new Set([...example.matchAll(/^#?([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!))
    const set = runtime.filter((s) => s.op === "ENV").flatMap((s) => [...s.args.matchAll(/([A-Z][A-Z0-9_]*)=/g)].map((m) => m[1]!))
    expect(set).toEqual(["HTTP_HOST", "HTTP_PORT", "PG_DATA_DIR"])
    expect(set.filter((name) => !listed.has(name))).toEqual([])
  })
})
