import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { EXECUTION_LOG_COMMIT_KIND, Valkey, ValkeyStreams } from "@microdcs/store"
import { unsafeCommand } from "@microdcs/store/unsafe"
import { snapshot } from "@microdcs/testkit"
import { tokenDigest } from "../src/HttpUsers.js"
import type { DaemonProcess, HttpReply } from "./DaemonProcess.js"

/** The users of the action tests: an operator (plain token), a viewer (by its SHA-256), a second operator. */
export const OPERATOR = { name: "alice", token: "alice-operator-token-3c9e1f" }
export const VIEWER = { name: "bob", token: "bob-viewer-token-77a0d2c4" }

/** A token file (mode 0600) with the operator and the viewer; the viewer's token stored as its digest. */
export const writeTokenFile = (): string => {
  const dir = mkdtempSync(join(tmpdir(), "island-tokens-"))
  const path = join(dir, "tokens")
  writeFileSync(path, `# name role token\n${OPERATOR.name} operator ${OPERATOR.token}\n\n${VIEWER.name}   viewer sha256:${tokenDigest(VIEWER.token)}\n`, { mode: 0o600 })
  return path
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

/** A POST as the console's page sends it: the token, a JSON body, and (by default) no browser headers. */
export const post = (d: DaemonProcess, path: string, token: string, body: unknown = {}, headers: Readonly<Record<string, string>> = {}): Promise<HttpReply> =>
  d.request("POST", path, { ...bearer(token), "content-type": "application/json", ...headers }, JSON.stringify(body))

/**
 * A dead letter in the execution log's commit stream of `scope`, dead-lettered as its poller
 * would: the tests run without the storage role, so nothing consumes that stream and a redriven
 * entry stays where it lands. Returns the dead letter's id.
 */
export const deadLetterCommit = (scope: string, fields: Readonly<Record<string, string>> = { job: "jo-dead", n: "1" }) =>
  Effect.gen(function* () {
    const valkey = yield* Valkey
    const streams = yield* ValkeyStreams
    const stream = yield* valkey.key("executionLogCommits", { scope })
    const deadLetter = yield* streams.deadLetterKey(EXECUTION_LOG_COMMIT_KIND, scope)
    yield* streams.ensureGroup(stream, "test-dlq")
    const pairs = Object.entries(fields).flat()
    yield* unsafeCommand(valkey, "xadd", (c) => c.xadd(stream, "*", ...pairs) as Promise<string>)
    const [batch] = yield* streams.readGroup({ streams: [stream], group: "test-dlq", consumer: "c", count: 1 })
    const entry = batch!.entries[0]!
    yield* streams.deadLetter({ stream, deadLetter, group: "test-dlq", id: entry.id, consumer: "c", error: "test: commit failed" })
    const page = yield* streams.readDeadLetters(EXECUTION_LOG_COMMIT_KIND, scope)
    return page.entries.at(-1)!.id
  })

/**
 * Every key under the prefix but the ones a running daemon rewrites on its own clock (the sweep's
 * heartbeat, the pollers' heartbeats, leases and liveness keys, and the publish sequence that its
 * paced state index takes when it goes out, up to an interval after the change that made it
 * due): what a request may not change.
 */
export const stableSnapshot = Effect.map(snapshot, (keys) =>
  Object.fromEntries(Object.entries(keys).filter(([key]) => !/:(sfc:heartbeat|poller:heartbeat|lease|holder|alive|pubseq)(:|$)/.test(key) && !/:ce:holder:/.test(key)))
)
