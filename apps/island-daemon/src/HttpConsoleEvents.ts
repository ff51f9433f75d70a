import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { Deferred, Duration, Effect, Option, Schedule, Stream } from "effect"
import { JobStates } from "@microdcs/job-state"
import { ChangeStream, ScopeFiguresReader, ScopeRegistry, SfcStateDao, validateText } from "@microdcs/store"
import { HttpContext } from "./HttpContext.js"
import { errorReply } from "./HttpReply.js"
import { query } from "./HttpConsoleReply.js"

/**
 * The console's live feed: Server-Sent Events, so a page updates without polling. The server
 * reads what changed and pushes it:
 *
 *   event: change     one entry of `changes:{scope}` (every scope, or the one asked for), id = its stream id
 *   event: execution  the job's execution state was written (its version), for `job=`
 *   event: figures    the island's stream and index sizes changed, for `figures=1`
 *
 * A page refetches its view when an event arrives. The server looks for news every
 * {@link TICK_MS} (nudges are only wake-ups, the change stream is the truth, and the engine's
 * state writes have no change entry); the stream ends when the island stops (before the daemon
 * drains), when the server closes, or after `max` events, and the page's reader connects again
 * from its last id.
 */
const TICK_MS = 250
/** The figures (a few pipelined size reads per scope) are read less often than the changes. */
const FIGURES_EVERY = 4

interface Feed {
  readonly scope: string | undefined
  readonly job: string | undefined
  readonly figures: boolean
  readonly max: number | undefined
  readonly after: string | undefined
}

const STATES = Object.keys(JobStates)
const encoder = new TextEncoder()
const frame = (event: string, data: unknown, id?: string) => encoder.encode(`${id === undefined ? "" : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)

/** Parses the query: 400 names the field that is wrong. */
const feedOf = Effect.gen(function* () {
  const q = yield* query
  const request = yield* HttpServerRequest.HttpServerRequest
  const scope = q.get("scope") ?? undefined
  const job = q.get("job") ?? undefined
  if (scope !== undefined) yield* validateText("scope", scope)
  if (job !== undefined) yield* validateText("job", job)
  const maxText = q.get("max")
  const max = maxText === null ? undefined : Number(maxText)
  if (max !== undefined && !(Number.isInteger(max) && max > 0)) return yield* Effect.fail({ field: "max", message: "max must be a positive integer" })
  const after = q.get("after") ?? request.headers["last-event-id"] ?? undefined
  if (after !== undefined && scope === undefined) return yield* Effect.fail({ field: "after", message: "after needs scope (a cursor is one scope's)" })
  if (after !== undefined && !/^\d+-\d+$/.test(after)) return yield* Effect.fail({ field: "after", message: "after must be a stream id from a previous event" })
  return { scope, job, figures: q.get("figures") === "1", max, after } satisfies Feed
})

/** What one connection's functions share: its services, the feed asked for, and what it last saw. */
interface FeedDeps {
  readonly feed: Feed
  readonly changes: ChangeStream["Service"]
  readonly states: SfcStateDao["Service"]
  readonly registry: ScopeRegistry["Service"]
  readonly figuresReader: ScopeFiguresReader["Service"]
  readonly cursors: Map<string, string>
  lastVersion: number | null
  lastFigures: string
  tick: number
}

const scopesNow = (s: FeedDeps) => (s.feed.scope === undefined ? Effect.map(s.registry.list, (all) => [...all]) : Effect.succeed([s.feed.scope]))

// New changes only: a scope's cursor starts at its newest entry (or at the id the page gives back).
const cursorOf = (s: FeedDeps, scope: string) =>
  Effect.gen(function* () {
    const known = s.cursors.get(scope)
    if (known !== undefined) return known
    const start = s.feed.after ?? Option.getOrElse(yield* s.changes.latestId(scope), () => "0")
    s.cursors.set(scope, start)
    return start
  })

const executionVersion = (s: FeedDeps) =>
  s.feed.job === undefined ? Effect.succeed(null) : s.states.get(s.feed.job).pipe(Effect.map((d) => d.version), Effect.orElseSucceed(() => null))

const figuresText = (s: FeedDeps) =>
  Effect.gen(function* () {
    const all = yield* s.registry.list
    return JSON.stringify(yield* s.figuresReader.figures([...all].sort(), STATES))
  })

/** The change entries since each scope's cursor, which moves past them. */
const changeFrames = (s: FeedDeps, out: Array<Uint8Array>) =>
  Effect.gen(function* () {
    for (const scope of yield* scopesNow(s)) {
      const page = yield* s.changes.read(scope, { after: yield* cursorOf(s, scope), count: 500 })
      for (const entry of page.entries) out.push(frame("change", { scope, ...entry }, s.feed.scope === undefined ? undefined : entry.streamId))
      s.cursors.set(scope, page.next)
    }
  })

/** An `execution` frame when the job's version moved since the last tick. */
const executionFrame = (s: FeedDeps, out: Array<Uint8Array>) =>
  Effect.gen(function* () {
    const version = yield* executionVersion(s)
    if (version === s.lastVersion) return
    s.lastVersion = version
    out.push(frame("execution", { job: s.feed.job, version }))
  })

/** A `figures` frame every {@link FIGURES_EVERY} ticks, when the figures changed. */
const figuresFrame = (s: FeedDeps, out: Array<Uint8Array>) =>
  Effect.gen(function* () {
    if (!(s.feed.figures && ++s.tick % FIGURES_EVERY === 0)) return
    const text = yield* figuresText(s)
    if (text === s.lastFigures) return
    s.lastFigures = text
    out.push(frame("figures", { at: Date.now() }))
  })

/** One tick: what changed since the last. */
const poll = (s: FeedDeps) =>
  Effect.gen(function* () {
    const out: Array<Uint8Array> = []
    yield* changeFrames(s, out)
    yield* executionFrame(s, out)
    yield* figuresFrame(s, out)
    return out
  })

/** The feed's starting point: each scope's cursor, the job's version and the figures as they are now. */
const openFeed = (feed: Feed) =>
  Effect.gen(function* () {
    const s: FeedDeps = {
      feed,
      changes: yield* ChangeStream,
      states: yield* SfcStateDao,
      registry: yield* ScopeRegistry,
      figuresReader: yield* ScopeFiguresReader,
      cursors: new Map(),
      lastVersion: null,
      lastFigures: "",
      tick: 0
    }
    for (const scope of yield* scopesNow(s)) yield* cursorOf(s, scope)
    s.lastVersion = yield* executionVersion(s)
    s.lastFigures = feed.figures ? yield* figuresText(s) : ""
    return s
  })

/** The events of one connection: a `hello` first, then what each tick finds. */
const feedStream = (feed: Feed) =>
  Effect.gen(function* () {
    const s = yield* openFeed(feed)
    const hello = frame("hello", { scope: feed.scope ?? null, job: feed.job ?? null, cursors: Object.fromEntries(s.cursors) })
    // The feed ends as soon as the island stops (before its store closes), so a stopping daemon
    // is not kept waiting by its pages.
    const { island } = yield* HttpContext
    const news = Stream.fromSchedule(Schedule.spaced(Duration.millis(TICK_MS))).pipe(
      Stream.takeWhile(() => island() !== undefined),
      Stream.mapEffect(() => poll(s)),
      Stream.flattenIterable
    )
    return Stream.concat(Stream.make(hello), news)
  })

/** `GET /api/console/events`: see the module comment. HEAD answers the headers only. */
export const consoleEvents = Effect.gen(function* () {
  const { closing } = yield* HttpContext
  const request = yield* HttpServerRequest.HttpServerRequest
  const parsed = yield* Effect.result(feedOf)
  if (parsed._tag === "Failure") {
    const e = parsed.failure
    return yield* errorReply(400, "bad-request", "field" in e ? `${e.field}: ${e.message}` : String(e))
  }
  const feed = parsed.success
  const headers = { "content-type": "text/event-stream", "x-accel-buffering": "no" }
  if (request.method === "HEAD") return HttpServerResponse.empty({ status: 200, headers })
  const services = yield* Effect.context<ChangeStream | SfcStateDao | ScopeRegistry | ScopeFiguresReader>()
  const events: Stream.Stream<Uint8Array, unknown> = yield* feedStream(feed).pipe(Effect.orElseSucceed(() => Stream.empty))
  const body = (feed.max === undefined ? events : Stream.take(events, feed.max)).pipe(
    // A store failure ends the feed: the page connects again and reads the view anew.
    Stream.catch(() => Stream.empty),
    Stream.interruptWhen(Deferred.await(closing)),
    Stream.provideContext(services)
  )
  return HttpServerResponse.stream(body, { status: 200, headers, contentType: "text/event-stream" })
})
