import type { Redis } from "iovalkey"

/**
 * Gathers the commands issued on a busy connection in one turn of the event loop into one socket
 * write: a command issued while others await their replies corks the socket, and `setImmediate`
 * uncorks it once the I/O callbacks of this turn (each reply or message that arrived, and the
 * fibers they resumed) ran. Uncorking at `process.nextTick` instead wrote once per callback: under
 * load twice the write calls, each a system call that also wakes the server. A command on an idle
 * connection leaves at once: a lone call waits for no turn. Unlike iovalkey's auto-pipelining,
 * which holds every later command until its one pipeline in flight is answered, the next turn's
 * commands leave at once too: the server never waits while this process reads replies. Commands
 * go out in the order they were issued, as on a plain connection (a `WAIT` after its writes, too).
 *
 * Returns the function to call before issuing commands; `many` says the caller issues several
 * now, which corks an idle connection too.
 */
export const makeTickWrites = (client: Redis): ((many?: boolean) => void) => {
  let corked: Redis["stream"] | undefined
  const uncork = () => {
    const stream = corked
    corked = undefined
    stream?.uncork()
  }
  return (many = false) => {
    if (corked !== undefined || (!many && client.commandQueue.length === 0)) return
    // The socket of this moment: a reconnect replaces it, and the uncork goes to the one corked.
    const stream = client.stream as Redis["stream"] | undefined
    if (stream === undefined) return
    stream.cork()
    corked = stream
    setImmediate(uncork)
  }
}
