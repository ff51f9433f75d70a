import type { ScopedFamily } from "./ValkeyStreams.js"
import { EXECUTION_LOG_COMMIT_KIND } from "./ExecutionLogStore.js"

/**
 * The streams of a scope that consumer groups read, by their poller kind: the kind names the
 * stream's dead-letter stream `dlq:{kind}:{scope}` too. One list for everything that walks them
 * (the `/metrics` figures, the redrive, the operator's views), so a new stream with a poller is
 * counted and redrivable the moment it is added here.
 */
export const SCOPE_STREAMS = [
  { kind: "changes", family: "changes" },
  { kind: "sfc", family: "sfcWork" },
  { kind: EXECUTION_LOG_COMMIT_KIND, family: "executionLogCommits" }
] as const satisfies ReadonlyArray<{ readonly kind: string; readonly family: ScopedFamily }>

/** A scope stream by its poller (and dead-letter) kind: `changes`, `sfc`, `dagcommit`. */
export type ScopeStreamName = (typeof SCOPE_STREAMS)[number]["kind"]

/** The stream family of a poller kind, or `undefined` for a kind no scope stream has. */
export const scopeStreamFamily = (kind: string): ScopedFamily | undefined => SCOPE_STREAMS.find((s) => s.kind === kind)?.family
