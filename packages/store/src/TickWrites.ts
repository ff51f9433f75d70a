import type { Redis } from "iovalkey"

/**
 * Gathers the commands issued on a busy connection in one tick into one socket write: a command
 * issued while others await their replies corks the socket, and `process.nextTick` uncorks it once
 * the tick's code and the microtasks it queued (the fibers it resumed) ran. A command on an idle
 * connection leaves at once: a lone call waits for no tick. Unlike iovalkey's auto-pipelining,
 * which holds every later command until its one pipeline in flight is answered, the next tick's
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
    process.nextTick(uncork)
  }
}
