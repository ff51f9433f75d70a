import { dedupeHash } from "@microdcs/keyschema"
import type { JobControlRequest } from "./Request.js"

/**
 * The operation id a request's write carries: the same for every delivery of one CloudEvent
 * (source and id), so a redelivery processed after a crash can recognise the write it already
 * made (the store finds an op id on the document or in the change stream).
 */
export const requestOperationId = (request: Pick<JobControlRequest, "source" | "id">): string =>
  `req-${dedupeHash(request.source, request.id)}`
