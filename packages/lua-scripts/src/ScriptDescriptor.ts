import { createHash } from "node:crypto"
import { loadScriptSource, type ScriptDir } from "./ScriptSource.js"

/** One argument as it goes on the wire. Numbers are sent as their decimal text. */
export type ScriptArg = string | number | Buffer

/**
 * A typed handle on one Lua file: its name, source, SHA1, key names (in KEYS order), an encoder
 * for ARGV and a decoder for the reply. Built once at import; the Valkey service runs it with
 * EVALSHA and falls back to the source on NOSCRIPT.
 */
export interface ScriptDescriptor<K extends string, A, R> {
  readonly name: string
  readonly file: string
  readonly source: string
  readonly sha1: string
  readonly keyNames: ReadonlyArray<K>
  /** The named (fixed) keys; a script with a key tail sends more per call (see {@link scriptKeys}). */
  readonly numberOfKeys: number
  /**
   * KEYS after the named ones, derived from the call's arguments, for a script whose file name
   * ends in `-{n}+.lua` (n fixed keys, then a variable tail). Deriving the tail from the same
   * arguments that encode its counts in ARGV keeps KEYS and ARGV from drifting apart.
   */
  readonly tailKeys?: ((args: A) => ReadonlyArray<string>) | undefined
  readonly encodeArgs: (args: A) => ReadonlyArray<ScriptArg>
  /** Turns the raw RESP2 reply into a typed value. Throws only on a reply no script can give: a bug. */
  readonly decodeReply: (raw: unknown) => R
}

/** The keys of a script, by name. */
// biome-ignore lint/suspicious/noExplicitAny: matches a descriptor of any arguments and reply
export type ScriptKeys<S> = S extends ScriptDescriptor<infer K, any, any> ? Readonly<Record<K, string>> : never
// biome-ignore lint/suspicious/noExplicitAny: matches a descriptor of any keys and reply
export type ScriptArgs<S> = S extends ScriptDescriptor<any, infer A, any> ? A : never
// biome-ignore lint/suspicious/noExplicitAny: matches a descriptor of any keys and arguments
export type ScriptReply<S> = S extends ScriptDescriptor<any, any, infer R> ? R : never

/** `-{n}.lua`: exactly n keys; `-{n}+.lua`: n fixed keys followed by a variable tail. */
const keyCountInName = (file: string): { readonly fixed: number; readonly tail: boolean } => {
  const match = /-(\d+)(\+?)\.lua$/.exec(file)
  if (!match) throw new Error(`script file ${file} must end in -{numberOfKeys}.lua or -{numberOfKeys}+.lua`)
  return { fixed: Number(match[1]), tail: match[2] === "+" }
}

/**
 * Declares a script from its file. The key count is part of the file name (BullMQ style) and
 * must equal the number of key names given here, so the two can never drift apart.
 */
export const defineScript = <const K extends string, A, R>(options: {
  readonly file: string
  /**
   * The folder `file` is in, for a script outside this package (an extension's own `lua/`
   * folder: `new URL("../lua/", import.meta.url)`, shipped in its package's `files`). Default:
   * this package's scripts, embedded in its build.
   */
  readonly dir?: ScriptDir | undefined
  readonly keys: ReadonlyArray<K>
  readonly encodeArgs: (args: A) => ReadonlyArray<ScriptArg>
  readonly decodeReply: (raw: unknown) => R
  /** Required exactly when the file name ends in `+.lua`: the tail of KEYS for one call. */
  readonly tailKeys?: ((args: A) => ReadonlyArray<string>) | undefined
}): ScriptDescriptor<K, A, R> => {
  const { fixed: numberOfKeys, tail } = keyCountInName(options.file)
  if (tail !== (options.tailKeys !== undefined)) {
    throw new Error(`${options.file}: a key tail needs a file name ending in +.lua and a tailKeys function, both or neither`)
  }
  if (numberOfKeys !== options.keys.length) {
    throw new Error(`${options.file} declares ${numberOfKeys} keys in its name but ${options.keys.length} key names`)
  }
  const source = loadScriptSource(options.file, options.dir)
  return {
    name: options.file.replace(/-\d+\+?\.lua$/, ""),
    file: options.file,
    source,
    sha1: createHash("sha1").update(source).digest("hex"),
    keyNames: options.keys,
    numberOfKeys,
    tailKeys: options.tailKeys,
    encodeArgs: options.encodeArgs,
    decodeReply: options.decodeReply
  }
}

/** Orders named keys as the script expects them in KEYS. */
export const orderKeys = <K extends string>(
  // biome-ignore lint/suspicious/noExplicitAny: only the key names are read
  script: ScriptDescriptor<K, any, any>,
  keys: Readonly<Record<K, string>>
): Array<string> => script.keyNames.map((name) => keys[name])

/** Every key of one call, in KEYS order: the named keys, then the tail derived from `args`. */
export const scriptKeys = <K extends string, A>(
  // biome-ignore lint/suspicious/noExplicitAny: the reply is not read
  script: ScriptDescriptor<K, A, any>,
  keys: Readonly<Record<K, string>>,
  args: A
): Array<string> => {
  const named = orderKeys(script, keys)
  return script.tailKeys ? [...named, ...script.tailKeys(args)] : named
}
