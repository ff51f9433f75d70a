import type { Redis } from "iovalkey"
import type { ScriptArg, ScriptDescriptor } from "@microdcs/lua-scripts"
import { isNoScript } from "./FailureKind.js"
import type { Confirmed, ReplicaAck } from "./ReplicaAck.js"

/** EVALSHA, and the script's source after NOSCRIPT (restart, failover, SCRIPT FLUSH). */
export const evalScript = (
  c: Redis,
  descriptor: ScriptDescriptor<string, never, unknown>,
  keys: ReadonlyArray<string>,
  argv: ReadonlyArray<ScriptArg>
): Promise<unknown> =>
  c.evalsha(descriptor.sha1, keys.length, ...keys, ...argv).catch((error: unknown) =>
    isNoScript(error) ? c.eval(descriptor.source, keys.length, ...keys, ...argv) : Promise.reject(error)
  )

/** {@link evalScript} with `minReplicasAck`: the NOSCRIPT fallback is a write of its own, so it gets a WAIT of its own. */
export const confirmedScript = (
  replicaAck: ReplicaAck,
  c: Redis,
  descriptor: ScriptDescriptor<string, never, unknown>,
  keys: ReadonlyArray<string>,
  argv: ReadonlyArray<ScriptArg>
): Promise<Confirmed<unknown>> =>
  replicaAck
    .send(c, (c) => c.evalsha(descriptor.sha1, keys.length, ...keys, ...argv))
    .catch((error: unknown) =>
      isNoScript(error) ? replicaAck.send(c, (c) => c.eval(descriptor.source, keys.length, ...keys, ...argv)) : Promise.reject(error)
    )
