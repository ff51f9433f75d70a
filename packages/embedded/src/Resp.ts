import { Socket } from "node:net"

/** A decoded RESP2 reply: simple or bulk string, integer, nil, or an array of replies. */
export type RespReply = string | number | null | ReadonlyArray<RespReply>

/** An error reply (`-ERR ...`) from the server. */
export class RespError extends Error {
  override readonly name = "RespError"
}

const encode = (args: ReadonlyArray<string | number>): string =>
  `*${args.length}\r\n` + args.map((a) => `$${Buffer.byteLength(String(a))}\r\n${a}\r\n`).join("")

/** Parses one reply at `at`; `undefined` while the buffer does not hold all of it yet. */
const parse = (buffer: Buffer, at: number): { readonly value: RespReply | RespError; readonly end: number } | undefined => {
  const lineEnd = buffer.indexOf("\r\n", at)
  if (lineEnd < 0) return undefined
  const type = String.fromCharCode(buffer[at]!)
  const line = buffer.toString("utf8", at + 1, lineEnd)
  const next = lineEnd + 2
  switch (type) {
    case "+":
      return { value: line, end: next }
    case "-":
      return { value: new RespError(line), end: next }
    case ":":
      return { value: Number(line), end: next }
    case "$": {
      const length = Number(line)
      if (length < 0) return { value: null, end: next }
      if (buffer.length < next + length + 2) return undefined
      return { value: buffer.toString("utf8", next, next + length), end: next + length + 2 }
    }
    case "*": {
      const count = Number(line)
      if (count < 0) return { value: null, end: next }
      const items: Array<RespReply> = []
      let end = next
      for (let i = 0; i < count; i++) {
        const item = parse(buffer, end)
        if (item === undefined) return undefined
        if (item.value instanceof RespError) return item
        items.push(item.value)
        end = item.end
      }
      return { value: items, end }
    }
    default:
      return { value: new RespError(`unexpected RESP type ${JSON.stringify(type)}`), end: buffer.length }
  }
}

/**
 * Sends one command on a connection of its own and resolves with its reply; an error reply
 * rejects with {@link RespError}. Enough for the topology helpers to configure and observe
 * servers and sentinels without a client library (embedded has no dependencies).
 */
export const respCommand = (host: string, port: number, args: ReadonlyArray<string | number>, timeoutMs = 5000): Promise<RespReply> =>
  new Promise((resolve, reject) => {
    const socket = new Socket()
    let buffer = Buffer.alloc(0)
    const done = (error: Error | undefined, value?: RespReply) => {
      socket.destroy()
      if (error) reject(error)
      else resolve(value ?? null)
    }
    socket.setTimeout(timeoutMs, () => done(new Error(`${args[0]} on ${host}:${port}: no reply within ${timeoutMs} ms`)))
    socket.once("error", (error) => done(error))
    socket.on("data", (chunk) => {
      buffer = Buffer.concat([buffer, chunk])
      const reply = parse(buffer, 0)
      if (reply === undefined) return
      if (reply.value instanceof RespError) done(reply.value)
      else done(undefined, reply.value)
    })
    socket.connect(port, host, () => socket.write(encode(args)))
  })

/** A flat `[field, value, field, value, ...]` reply (SENTINEL REPLICAS entries) as a record. */
export const fieldsOf = (reply: RespReply): Readonly<Record<string, string>> => {
  const record: Record<string, string> = {}
  if (!Array.isArray(reply)) return record
  for (let i = 0; i + 1 < reply.length; i += 2) record[String(reply[i])] = String(reply[i + 1])
  return record
}

/** `INFO` text as a record of its `field:value` lines. */
export const infoFields = (reply: RespReply): Readonly<Record<string, string>> => {
  const record: Record<string, string> = {}
  for (const line of String(reply).split("\r\n")) {
    const colon = line.indexOf(":")
    if (colon > 0) record[line.slice(0, colon)] = line.slice(colon + 1)
  }
  return record
}
