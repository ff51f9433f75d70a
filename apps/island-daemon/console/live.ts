import { authHeaders } from "./api.js"

/** One Server-Sent Event. */
export interface LiveEvent {
  readonly type: string
  readonly id: string | undefined
  readonly data: unknown
}

/**
 * Follows `/api/console/events` (the server pushes; the page never polls): each event goes to
 * `onEvent`. Read with `fetch` rather than `EventSource` so the token can go in a header. When
 * the stream ends (the server restarts, the island stops) it connects again after a pause that
 * grows to 5 s, from the last id it saw; `onConnect` runs on every (re)connection, so the page
 * reads its view anew and misses nothing that happened in between.
 */
export const follow = (params: Readonly<Record<string, string>>, onEvent: (event: LiveEvent) => void, onConnect: () => void): void => {
  let lastId: string | undefined
  let pause = 250
  const connect = async () => {
    const query = new URLSearchParams(params)
    if (lastId !== undefined) query.set("after", lastId)
    try {
      const response = await fetch(`/api/console/events?${query.toString()}`, { headers: { ...authHeaders(), accept: "text/event-stream" } })
      if (!response.ok || response.body === null) throw new Error(`events: ${response.status}`)
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
      let buffer = ""
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        buffer += value
        let end: number
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          const fields = new Map<string, string>()
          for (const line of block.split("\n")) {
            const colon = line.indexOf(":")
            if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1).trimStart())
          }
          const type = fields.get("event") ?? "message"
          const id = fields.get("id")
          if (id !== undefined) lastId = id
          if (type === "hello") {
            pause = 250
            onConnect()
          }
          onEvent({ type, id, data: JSON.parse(fields.get("data") ?? "null") as unknown })
        }
      }
    } catch {
      // Connects again below.
    }
    setTimeout(() => void connect(), pause)
    pause = Math.min(pause * 2, 5_000)
  }
  void connect()
}

/** Runs `refresh` at most once per `ms` however many events come (the last one is never lost). */
export const coalesce = (refresh: () => Promise<void>, ms = 150): (() => void) => {
  let running = false
  let again = false
  const run = async () => {
    if (running) {
      again = true
      return
    }
    running = true
    try {
      await refresh()
    } finally {
      await new Promise((resolve) => setTimeout(resolve, ms))
      running = false
      if (again) {
        again = false
        void run()
      }
    }
  }
  return () => void run()
}
