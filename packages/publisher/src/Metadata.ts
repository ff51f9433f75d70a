import { createHash } from "node:crypto"
import { Clock, Effect } from "effect"
import { metadataTopic } from "@microdcs/cloudevents-mqtt"
import type { PublisherContext } from "./PublisherContext.js"
import { metadataEvent, PublisherEventTypes, type PublisherMetadata } from "./PublisherEvents.js"
import { retain } from "./RetainedTopics.js"

// 2: `result/{id}` carries the job response v2 (OPC 10031-4 ISA95JobResponseDataType) instead of the v1 form.
const LAYOUT_VERSION = 2

/** The island's metadata as this publisher would retain it now. */
export const describeIsland = (ctx: PublisherContext, scopes: Iterable<string>): PublisherMetadata => {
  const { prefix, discriminator } = ctx.options
  const base = discriminator === undefined ? prefix : `${prefix}/${discriminator}`
  return {
    layout_version: LAYOUT_VERSION,
    source: ctx.options.source,
    prefix,
    discriminator: discriminator ?? null,
    instance_id: ctx.options.instanceId,
    topics: {
      order: `${base}/{scope}/order/{jobOrderId}`,
      result: `${base}/{scope}/result/{jobOrderId}`,
      state_index: `${base}/{scope}/state-index`,
      state_index_page: `${base}/{scope}/state-index/{page}`,
      events: discriminator === undefined ? `${prefix}/{scope}/events` : `${prefix}/{scope}/${discriminator}/events`
    },
    event_types: PublisherEventTypes,
    max_payload_bytes: ctx.options.maxPayloadBytes,
    message_expiry_seconds: ctx.options.messageExpirySeconds,
    scopes: [...scopes].sort()
  }
}

/**
 * Retains `P[/D]/metadata` after checking the lease. Its CloudEvent id is a digest
 * of the content, so a consumer that deduplicates sees a republished, unchanged one once.
 */
export const publishMetadata = (ctx: PublisherContext, scopes: Iterable<string>) =>
  Effect.gen(function* () {
    const metadata = describeIsland(ctx, scopes)
    const digest = createHash("sha256").update(JSON.stringify(metadata)).digest("hex").slice(0, 32)
    const time = new Date(yield* Clock.currentTimeMillis).toISOString()
    yield* ctx.fence
    yield* retain(ctx, metadataTopic({ prefix: ctx.options.prefix, discriminator: ctx.options.discriminator }), metadataEvent(ctx.options.source, metadata, digest, time))
  })
