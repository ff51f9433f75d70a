import { Effect } from "effect"
import { scriptKeys, type ScriptDescriptor } from "@microdcs/lua-scripts"
import type { ConnectionError, ValkeyService } from "@microdcs/store"

interface BufferEval {
  evalshaBuffer(sha1: string, numberOfKeys: number, ...args: ReadonlyArray<string | number | Buffer>): Promise<unknown>
  evalBuffer(source: string, numberOfKeys: number, ...args: ReadonlyArray<string | number | Buffer>): Promise<unknown>
}

const isNoScript = (error: unknown): boolean => error instanceof Error && error.message.startsWith("NOSCRIPT")

/**
 * Runs a read script whose reply carries binary values (encoded entries): `EVALSHA` with
 * Buffer replies, falling back to the source on NOSCRIPT as `Valkey.script` does. The store's
 * `script` decodes every reply as UTF-8 text, which would mangle MessagePack and LZ4 bytes.
 * Only for scripts that write nothing a caller must see confirmed (no replica WAIT here).
 */
export const scriptWithBytes = <K extends string, A, R>(
  valkey: ValkeyService,
  script: ScriptDescriptor<K, A, R>,
  keys: Readonly<Record<K, string>>,
  args: A
): Effect.Effect<R, ConnectionError> => {
  const callKeys = scriptKeys(script, keys, args)
  const argv = script.encodeArgs(args)
  return valkey
    .command(`script ${script.name}`, async (client) => {
      // The Buffer variants exist on every client (one per command) but are missing from iovalkey's types;
      // `callBuffer` would do, but it loses its command name under auto-pipelining.
      const c = client as unknown as BufferEval
      try {
        return await c.evalshaBuffer(script.sha1, callKeys.length, ...callKeys, ...argv)
      } catch (error) {
        if (!isNoScript(error)) throw error
        return await c.evalBuffer(script.source, callKeys.length, ...callKeys, ...argv)
      }
    })
    .pipe(Effect.map((raw) => script.decodeReply(raw)))
}
