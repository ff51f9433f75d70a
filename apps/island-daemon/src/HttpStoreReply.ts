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
  readonly notFound: string
  readonly corrupt: string
  /** The `error` name of a 500 answer, e.g. `corrupt-log`. */
  readonly corruptName: string
  /** More tags of the family with their answer (a stored configuration that does not read back: 500). */
  readonly more?: Readonly<Record<string, { readonly status: number; readonly error: string }>> | undefined
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
        Effect.catchAll((e) =>
          Effect.succeed<Reply>(
            tags.more?.[e._tag] !== undefined
              ? { status: tags.more[e._tag]!.status, body: { error: tags.more[e._tag]!.error, message: e.message } }
              : e._tag === tags.notFound
              ? { status: 404, body: { error: "not-found", message: e.message } }
              : e instanceof InvalidInput
                ? { status: 400, body: { error: "bad-request", message: `${e.field}: ${e.message}` } }
                : e._tag === tags.corrupt
                  ? { status: 500, body: { error: tags.corruptName, message: e.message } }
                  : { status: 503, body: { error: e._tag, message: "store unavailable" } }
          )
        ),
        Effect.flatMap((reply) => jsonReply(reply.status, reply.body))
      )
    )
