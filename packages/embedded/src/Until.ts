const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Polls `check` until it gives a value; rejects with the last reason after `timeoutMs`. */
export const until = async <A>(what: string, check: () => Promise<A | string>, timeoutMs: number): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  let reason = "not checked yet"
  while (Date.now() < deadline) {
    try {
      const result = await check()
      if (typeof result !== "string") return result
      reason = result
    } catch (error) {
      reason = error instanceof Error ? error.message : String(error)
    }
    await sleep(100)
  }
  throw new Error(`${what} within ${timeoutMs} ms: ${reason}`)
}
