/**
 * Counts the commands this process sends to the server, by wrapping the client class's
 * `sendCommand` (the one method every command goes through, pipelined or not, in iovalkey and in
 * ioredis alike). The server's own counters (`INFO commandstats`) also count the commands a Lua
 * script runs inside the server; this counter is what crosses the wire.
 */
interface CommandSender {
  sendCommand(...args: Array<unknown>): unknown
}

const wrapped = new WeakSet<object>()
const uncounted = new WeakSet<object>()
let sent = 0
const byName = new Map<string, number>()

/** Counts every command sent through instances of the class with this prototype (idempotent). */
export const countSendsOf = (prototype: CommandSender): void => {
  if (wrapped.has(prototype)) return
  wrapped.add(prototype)
  const original = prototype.sendCommand
  prototype.sendCommand = function (this: object, ...args: Array<unknown>) {
    if (!uncounted.has(this)) {
      sent++
      const name = String((args[0] as { readonly name?: unknown } | undefined)?.name ?? "?").toLowerCase()
      byName.set(name, (byName.get(name) ?? 0) + 1)
    }
    return original.apply(this, args)
  }
}

/** Leaves this client out of the count (the benchmark's own measuring connection). */
export const leaveUncounted = (client: object): void => {
  uncounted.add(client)
}

/** Commands sent so far by counted clients of this process. */
export const sentCommands = (): number => sent

/** Commands sent so far by counted clients of this process, per command name. */
export const sentByCommand = (): ReadonlyMap<string, number> => new Map(byName)
