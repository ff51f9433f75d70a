import { Result, Schema } from "effect"
import type { CloudEvent } from "@microdcs/cloudevents-mqtt"

/**
 * The reply kept with a request's done mark: the reply event exactly as it was
 * first sent (same id, data and error attributes), so a duplicate of a processed request is
 * answered with the first answer, not a new one computed from a store that has moved on.
 * Correlation and causation are not part of it: each reply takes them from its own request.
 */
const StoredReplyEvent = Schema.Struct({
  specversion: Schema.Literal("1.0"),
  id: Schema.String,
  source: Schema.String,
  type: Schema.String,
  subject: Schema.optional(Schema.String),
  time: Schema.optional(Schema.String),
  datacontenttype: Schema.optional(Schema.String),
  dataschema: Schema.optional(Schema.String),
  data: Schema.optional(Schema.Unknown),
  extensions: Schema.Record(Schema.String, Schema.String)
})

const decodeText = Schema.decodeUnknownResult(Schema.fromJsonString(StoredReplyEvent))

/** The JSON text of a reply event, to keep with the done mark. */
export const encodeStoredReply = (event: CloudEvent): string => JSON.stringify(event)

/** The kept reply event, or why the stored text is not one (a corrupted entry: send nothing). */
export const decodeStoredReply = (text: string): Result.Result<CloudEvent, string> =>
  Result.mapError(decodeText(text), (error) => error.message)
