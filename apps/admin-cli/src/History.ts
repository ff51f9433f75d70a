import { Effect } from "effect"
import { decodeOrigin, type Origin, originText } from "@microdcs/job-state"
import { type ChangeEntry, ChangeStream } from "@microdcs/store"
import { isoTime } from "./Format.js"
import { renderTable } from "./Table.js"

/** Entries per read: large pages, since an operator asks for one document's whole history. */
const PAGE = 10_000

/** A change entry with who made it (`null` for an entry written before origins were recorded). */
export interface HistoryEntry extends Omit<ChangeEntry, "origin"> {
  readonly origin: Origin | null
}

/**
 * The change history of one document: every entry of `changes:{scope}` naming it, oldest
 * first, each with its origin. The stream is capped, so the history reaches back only as far as
 * the stream does.
 */
export const changeHistory = (scope: string, kind: string, id: string) =>
  Effect.gen(function* () {
    const changes = yield* ChangeStream
    const found: Array<HistoryEntry> = []
    let after = "0"
    for (;;) {
      const page = yield* changes.read(scope, { after, count: PAGE })
      for (const entry of page.entries) if (entry.kind === kind && entry.id === id) found.push({ ...entry, origin: decodeOrigin(entry.origin) ?? null })
      if (page.next === after) return found
      after = page.next
    }
  })

export const renderHistory = (entries: ReadonlyArray<HistoryEntry>): string =>
  renderTable(
    [
      { header: "STREAM ID", value: (e: HistoryEntry) => e.streamId },
      { header: "TIME", value: (e) => isoTime(e.ts) },
      { header: "CHANGE", value: (e) => e.change },
      { header: "VERSION", value: (e) => e.version, align: "right" },
      { header: "BY", value: (e) => (e.origin === null ? "" : originText(e.origin)) },
      { header: "COMMENT", value: (e) => e.origin?.comment },
      { header: "OP", value: (e) => e.op }
    ],
    entries,
    "(no change entries left in the stream)"
  )
