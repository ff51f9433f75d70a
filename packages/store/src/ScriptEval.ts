import type { Redis } from "iovalkey"
import type { ScriptArg, ScriptDescriptor } from "@microdcs/lua-scripts"
import { isNoScript } from "./FailureKind.js"
import type { Confirmed, ReplicaAck } from "./ReplicaAck.js"

/** How a script's reply comes back: texts (UTF-8 decoded), or bytes as sent (binary values). */
export type ReplyForm = "text" | "bytes"

// The Buffer variants exist on every client (one per command) but are missing from iovalkey's types.
interface BufferEval {
  evalshaBuffer(sha1: string, keyCount: number, ...args: ReadonlyArray<string | ScriptArg>): Promise<unknown>
  evalBuffer(source: string, keyCount: number, ...args: ReadonlyArray<string | ScriptArg>): Promise<unknown>
}

const bySha = (c: Redis, form: ReplyForm, sha1: string, keys: ReadonlyArray<string>, argv: ReadonlyArray<ScriptArg>): Promise<unknown> =>
  form === "text" ? c.evalsha(sha1, keys.length, ...keys, ...argv) : (c as unknown as BufferEval).evalshaBuffer(sha1, keys.length, ...keys, ...argv)

const bySource = (c: Redis, form: ReplyForm, source: string, keys: ReadonlyArray<string>, argv: ReadonlyArray<ScriptArg>): Promise<unknown> =>
  form === "text" ? c.eval(source, keys.length, ...keys, ...argv) : (c as unknown as BufferEval).evalBuffer(source, keys.length, ...keys, ...argv)

/** EVALSHA, and the script's source after NOSCRIPT (restart, failover, SCRIPT FLUSH). */
export const evalScript = (
  c: Redis,
  descriptor: ScriptDescriptor<string, never, unknown>,
  keys: ReadonlyArray<string>,
  argv: ReadonlyArray<ScriptArg>,
  form: ReplyForm = "text"
): Promise<unknown> =>
  bySha(c, form, descriptor.sha1, keys, argv).catch((error: unknown) =>
    isNoScript(error) ? bySource(c, form, descriptor.source, keys, argv) : Promise.reject(error)
  )

/** {@link evalScript} with `minReplicasAck`: the NOSCRIPT fallback is a write of its own, so it gets a WAIT of its own. */
export const confirmedScript = (
  replicaAck: ReplicaAck,
  c: Redis,
  descriptor: ScriptDescriptor<string, never, unknown>,
  keys: ReadonlyArray<string>,
  argv: ReadonlyArray<ScriptArg>,
  form: ReplyForm = "text"
): Promise<Confirmed<unknown>> =>
  replicaAck
    .send(c, (c) => bySha(c, form, descriptor.sha1, keys, argv))
    .catch((error: unknown) =>
      isNoScript(error) ? replicaAck.send(c, (c) => bySource(c, form, descriptor.source, keys, argv)) : Promise.reject(error)
    )
