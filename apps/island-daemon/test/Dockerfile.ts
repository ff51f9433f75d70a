import { readFileSync } from "node:fs"

/** The repository's Dockerfile as its instructions, for the tests that read it. Not a test file itself. */

export interface Step {
  readonly op: string
  readonly args: string
}

export const dockerfileText = readFileSync(new URL("../../../Dockerfile", import.meta.url), "utf8")

/** The instructions, continuation lines joined, comments left out. */
export const dockerfileSteps = (text: string = dockerfileText): ReadonlyArray<Step> =>
  text
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => {
      const [op = "", ...rest] = line.split(/\s+/)
      return { op: op.toUpperCase(), args: rest.join(" ") }
    })

/** The instructions of the last stage: the image that runs. */
export const runtimeSteps = (steps: ReadonlyArray<Step> = dockerfileSteps()): ReadonlyArray<Step> => steps.slice(steps.findLastIndex((s) => s.op === "FROM"))

/** The HEALTHCHECK's command (its exec form). */
export const healthCheckCommand = (steps: ReadonlyArray<Step> = runtimeSteps()): ReadonlyArray<string> => {
  const args = steps.find((s) => s.op === "HEALTHCHECK")?.args ?? ""
  return JSON.parse(args.slice(args.indexOf("CMD ") + 4)) as ReadonlyArray<string>
}
