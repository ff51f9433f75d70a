import { Effect } from "effect"
import { InvalidInput } from "@microdcs/store"
import { withIsland } from "./HttpContext.js"
import { jsonReply } from "./HttpReply.js"

/** A read route's answer before it becomes JSON. */
export interface Reply {
  readonly status: number
  readonly body: unknown
}

/** Which error tags of a family of reads mean "nothing there" (404) and "stored value does not decode" (500). */
export interface ReadErrorTags {
  /** A family whose reads never miss or decode (a list) names neither. */
  readonly notFound?: string | undefined
  readonly corrupt?: string | undefined
  /** The `error` name of a 500 answer, e.g. `corrupt-log`. */
  readonly corruptName?: string | undefined
  /** More tags of the family with their answer (a stored configuration that does not read back: 500). */
  readonly more?: Readonly<Record<string, { readonly status: number; readonly error: string }>> | undefined
}

const failureReply = (tags: ReadErrorTags, e: { readonly _tag: string; readonly message?: string }): Reply => {
  const more = tags.more?.[e._tag]
  if (more !== undefined) return { status: more.status, body: { error: more.error, message: e.message } }
  if (e._tag === tags.notFound) return { status: 404, body: { error: "not-found", message: e.message } }
  if (e instanceof InvalidInput) return { status: 400, body: { error: "bad-request", message: `${e.field}: ${e.message}` } }
  if (e._tag === tags.corrupt) return { status: 500, body: { error: tags.corruptName ?? "corrupt", message: e.message } }
  return { status: 503, body: { error: e._tag, message: "store unavailable" } }
}

/**
 * A read route's answer over the running island (503 while it starts or stops): the family's
 * not-found tag is 404, a refused input 400, a value that does not decode 500, any other store
 * or database failure 503 (not the caller's fault; trying later may work).
 */
export const storeReadReply =
  (tags: ReadErrorTags) =>
  <E extends { readonly _tag: string; readonly message?: string }, R>(answer: Effect.Effect<Reply, E, R>) =>
    withIsland(
      answer.pipe(
        Effect.catch((e) => Effect.succeed(failureReply(tags, e))),
        Effect.flatMap((reply) => jsonReply(reply.status, reply.body))
      )
    )
