import { Effect, Layer, Queue } from "effect"
import { Nudges, parseTriggerEdit, TRIGGER_NUDGE_KIND, type TriggerEdit, TriggerStore } from "@microdcs/store"
import { TriggerChangeAnnouncer } from "./TriggerConfigEvent.js"

export interface TriggerEditRelayOptions {
  /** The name of the nudge connection; default `trigger-relay`. */
  readonly connectionName?: string | undefined
}

/** Claims the edit's announcement and, if this instance got it, announces the edit. */
const relayOne = (edit: TriggerEdit) =>
  Effect.gen(function* () {
    if (!(yield* Effect.flatMap(TriggerStore, (store) => store.claimAnnouncement(edit.edit)))) return
    const announcer = yield* TriggerChangeAnnouncer
    yield* announcer.announce({ id: edit.id, scope: edit.scope, change: edit.change, ...(edit.version === undefined ? {} : { version: edit.version }) })
  }).pipe(
    Effect.catch((error) =>
      Effect.logWarning("trigger edit not relayed; the nudge and the refresh still carry it").pipe(
        Effect.annotateLogs({ trigger: edit.id, edit: edit.edit, error: `${error._tag}: ${error.message}` })
      )
    )
  )

/**
 * Announces the trigger edits nobody announced: an edit from a process without a bus (the admin
 * CLI) publishes only its nudge, which every instance running this hears; each tries to claim the
 * edit (`TriggerStore.claimAnnouncement`, set only if absent) and the one that gets it announces
 * the edit through `TriggerChangeAnnouncer`, so every edit goes out once, wherever it was made.
 * An edit whose writer announced it itself (a daemon's config event) is left alone. Best effort,
 * like the announcement: a nudge lost in a reconnect is not relayed (the refresh still reloads).
 */
export const runTriggerEditRelay = (options: TriggerEditRelayOptions = {}) =>
  Effect.gen(function* () {
    const nudges = yield* Nudges
    // The nudge handler runs on the connection's event loop: it only queues, a fiber relays in order.
    const edits = yield* Queue.unbounded<TriggerEdit>()
    yield* nudges.listen(TRIGGER_NUDGE_KIND, options.connectionName ?? "trigger-relay", {
      onNudge: (message) => {
        const edit = parseTriggerEdit(message)
        if (edit !== undefined && !edit.announced) Queue.offerUnsafe(edits, edit)
      }
    })
    yield* Queue.take(edits).pipe(Effect.flatMap(relayOne), Effect.forever, Effect.forkScoped)
  })

/** {@link runTriggerEditRelay} for as long as the layer lives; needs the store's `Nudges` and `TriggerStore`, and an announcer. */
export const TriggerEditRelay = (options: TriggerEditRelayOptions = {}) => Layer.effectDiscard(runTriggerEditRelay(options))
