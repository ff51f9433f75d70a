import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ConfigProvider, Effect, Redacted, Result } from "effect"
import { describe, expect, it } from "vitest"
import { daemonConfig, describeConfigError } from "../src/DaemonConfig.js"
import { parseTokenFile, tokenDigest } from "../src/HttpUsers.js"
import { spawnScript } from "./DaemonProcess.js"

/**
 * The HTTP users: `HTTP_TOKEN` a viewer, `HTTP_OPERATOR_TOKEN` an operator, or a token file of
 * named users with roles, checked at start with every problem listed.
 */

const file = (text: string): string => {
  const path = join(mkdtempSync(join(tmpdir(), "island-users-")), "tokens")
  writeFileSync(path, text, { mode: 0o600 })
  return path
}

const users = (env: Record<string, string>) =>
  Effect.runPromise(Effect.result(daemonConfig.parse(ConfigProvider.fromEnvRecord({ VALKEY_URL: "redis://127.0.0.1:1", MQTT_URL: "mqtt://127.0.0.1:1", ...env }))))

const shown = (list: ReadonlyArray<{ readonly name: string; readonly role: string; readonly digest: Redacted.Redacted<string> }>) =>
  list.map((u) => [u.name, u.role, Redacted.value(u.digest)])

describe("token file", () => {
  it("names users with roles; a token is given as itself or as sha256:{hex}; blank and # lines are skipped", () => {
    const parsed = parseTokenFile(`# who role token\n\nalice operator alice-token-0123456789\n  bob\tviewer   sha256:${tokenDigest("bob-token-0123456789").toUpperCase()}\n`)
    expect(Result.isSuccess(parsed) && shown(parsed.success)).toEqual([
      ["alice", "operator", tokenDigest("alice-token-0123456789")],
      ["bob", "viewer", tokenDigest("bob-token-0123456789")]
    ])
  })

  it("lists every problem of the file at once, each with its line", () => {
    const text = [
      "alice operator alice-token-0123456789",
      "carol admin carol-token-0123456789",
      "dave viewer short",
      "erin viewer sha256:abc",
      "alice viewer other-token-0123456789",
      "frank viewer alice-token-0123456789",
      "not enough",
      "-x viewer xxxxxxxxxxxxxxxxxxxxxxx"
    ].join("\n")
    expect(parseTokenFile(text)).toEqual(
      Result.fail([
        "line 2: the role (second field) is not one of viewer, operator",
        "line 3: the token is shorter than 16 characters",
        "line 4: a sha256: token must be 64 hex digits",
        'line 7: expected "name role token", found 2 fields',
        'line 8: the name (first field) must be 1 to 64 letters, digits or . _ @ - (starting with a letter or digit)',
        "lines 1 and 5: the name alice is given twice",
        "lines 1 and 6: the same token is given twice"
      ])
    )
    expect(parseTokenFile("# nobody\n\n")).toEqual(Result.fail(["the file names no user"]))
  })

  it("HTTP_TOKEN is the viewer, HTTP_OPERATOR_TOKEN the operator; none: nobody", async () => {
    const both = await users({ HTTP_TOKEN: "view", HTTP_OPERATOR_TOKEN: "act" })
    expect(Result.isSuccess(both) && shown(both.success.httpUsers)).toEqual([
      ["viewer", "viewer", tokenDigest("view")],
      ["operator", "operator", tokenDigest("act")]
    ])
    const none = await users({})
    expect(Result.isSuccess(none) && none.success.httpUsers).toEqual([])
    // No token shows in the configuration as text.
    expect(JSON.stringify(Result.isSuccess(both) && both.success)).not.toMatch(/"view"|"act"/)
  })

  it("refuses a file beside the tokens, one token for both roles, and an unreadable file", async () => {
    const path = file("alice operator alice-token-0123456789\n")
    const problem = async (env: Record<string, string>) => {
      const read = await users(env)
      return Result.isFailure(read) ? describeConfigError(read.failure) : "accepted"
    }
    expect(await problem({ HTTP_TOKEN_FILE: path, HTTP_TOKEN: "view" })).toContain("HTTP_TOKEN_FILE: set it instead of HTTP_TOKEN and HTTP_OPERATOR_TOKEN")
    expect(await problem({ HTTP_TOKEN: "same", HTTP_OPERATOR_TOKEN: "same" })).toContain("HTTP_OPERATOR_TOKEN: must differ from HTTP_TOKEN")
    expect(await problem({ HTTP_TOKEN_FILE: join(tmpdir(), "no-such-token-file") })).toMatch(/HTTP_TOKEN_FILE: cannot read .*no-such-token-file \(ENOENT\)/)
  })

  it("a bad token file ends the daemon at start (exit 2) with every problem on one line, and no token in it", async () => {
    const path = file("alice operator alice-token-0123456789\nbob boss bob-token-0123456789\ncarol viewer tiny\nalice viewer alice-token-0123456789\n")
    const d = spawnScript("main.ts", { VALKEY_URL: "redis://127.0.0.1:1", MQTT_URL: "mqtt://127.0.0.1:1", HTTP_PORT: "0", ISLAND_INSTANCE_ID: "users-test", HTTP_TOKEN_FILE: path })
    const timer = setTimeout(() => d.child.kill("SIGKILL"), 15_000)
    const exit = await d.exited
    clearTimeout(timer)
    const stderr = d.stderr().trim()
    expect(exit.code, stderr).toBe(2)
    expect(stderr.split("\n")).toHaveLength(1)
    for (const problem of ["line 2: the role (second field)", "line 3: the token is shorter", "lines 1 and 4: the name alice is given twice", "lines 1 and 4: the same token is given twice"]) {
      expect(stderr).toContain(`HTTP_TOKEN_FILE: ${problem}`)
    }
    expect(stderr).not.toContain("alice-token")
    expect(d.stdout()).toBe("")
  }, 20_000)
})
