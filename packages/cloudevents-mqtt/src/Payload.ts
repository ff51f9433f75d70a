import { decode as decodeMsgpack, encode as encodeMsgpack } from "@msgpack/msgpack"
import { Result } from "effect"
import { jsonNestsDeeperThan, msgpackNestsDeeperThan } from "./NestingDepth.js"

/** How the data of an event is serialised, chosen by its content type. */
export type Codec = "json" | "msgpack"

export type CodecChoice =
  | { readonly _tag: "codec"; readonly codec: Codec }
  | { readonly _tag: "unsupported"; readonly reason: string }

/**
 * The codec for a content type. Parameters (`; charset=utf-8`) are ignored, `+json` suffixes are
 * JSON, and the usual MessagePack spellings are accepted. Structured mode
 * (`application/cloudevents+json`) is refused: the island speaks binary mode only.
 */
export const codecFor = (contentType: string): CodecChoice => {
  const base = (contentType.split(";", 1)[0] ?? "").trim().toLowerCase()
  if (base.startsWith("application/cloudevents")) {
    return { _tag: "unsupported", reason: `structured mode (${base}) is not supported; send binary mode` }
  }
  if (base === "application/json" || base === "text/json" || /^[a-z]+\/[^\s/]+\+json$/.test(base)) return { _tag: "codec", codec: "json" }
  if (base === "application/msgpack" || base === "application/x-msgpack" || base === "application/vnd.msgpack") {
    return { _tag: "codec", codec: "msgpack" }
  }
  return { _tag: "unsupported", reason: `unsupported content type '${contentType}'` }
}

const utf8 = new TextDecoder("utf-8", { fatal: true })

const message = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/**
 * Parses a payload; the reason on failure. Never throws. A payload nested deeper than `maxDepth`
 * is refused before it is parsed, and no MessagePack length may claim more than the payload holds.
 */
export const parsePayload = (codec: Codec, payload: Uint8Array, maxDepth: number): Result.Result<unknown, string> => {
  try {
    if (codec === "json") {
      if (jsonNestsDeeperThan(payload, maxDepth)) return Result.fail(`nests deeper than ${maxDepth} levels`)
      return Result.succeed(JSON.parse(utf8.decode(payload)))
    }
    if (msgpackNestsDeeperThan(payload, maxDepth)) return Result.fail(`nests deeper than ${maxDepth} levels`)
    // A plain Uint8Array view, so binary values come back as Uint8Array rather than Buffer.
    const bytes = new Uint8Array(payload.buffer, payload.byteOffset, payload.byteLength)
    const most = payload.byteLength
    return Result.succeed(decodeMsgpack(bytes, { maxStrLength: most, maxBinLength: most, maxArrayLength: most, maxMapLength: most, maxExtLength: most }))
  } catch (error) {
    return Result.fail(message(error))
  }
}

/** Serialises data; the reason on failure (a BigInt or a cycle for JSON, a function, ...). Never throws. */
export const serializeData = (codec: Codec, data: unknown): Result.Result<Buffer, string> => {
  try {
    if (codec === "msgpack") {
      const bytes = encodeMsgpack(data)
      return Result.succeed(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))
    }
    const text: string | undefined = JSON.stringify(data)
    return text === undefined ? Result.fail(`${typeof data} is not JSON`) : Result.succeed(Buffer.from(text, "utf8"))
  } catch (error) {
    return Result.fail(message(error))
  }
}
