import { Effect, Context, Layer } from "effect"
import { KeyFamilyError, KeyPartError } from "@microdcs/keyschema"
import {
  type ConnectionError,
  type DocumentDeleteInput,
  type DocumentPutInput,
  type DocumentWrite,
  type ExpectedVersion,
  expectedVersionProblem,
  InvalidInput,
  keyProblem,
  makeDocumentDao,
  newOperationId,
  NotFound,
  parseDocumentHash,
  readForWrite,
  retryWhileMoved,
  settleWrite,
  type StateMoved,
  type StoredDocument,
  typedCommand,
  Valkey,
  type ValkeyService,
  type VersionConflict,
  type Written,
  type WrongType
} from "@microdcs/store"
import { ticketKeys, type TicketStatus, ticketStatuses } from "./TicketKeys.js"
import { deleteTicket, putTicket, setTicketStatus } from "./TicketScripts.js"

/** A ticket put: the document text plus the two fields its indexes derive from. */
export interface PutTicket extends DocumentPutInput {
  readonly status: TicketStatus
  /** 1 (most urgent) to 5; the scope's list is ordered by it. */
  readonly severity: number
}

/** A ticket as stored: the document plus its indexed fields. */
export interface StoredTicket extends StoredDocument {
  readonly status: string
  readonly severity: number
}

/** The DAO's own write: a new status, the document text unchanged. */
export interface ChangeTicketStatus {
  readonly id: string
  readonly status: TicketStatus
  /** Default -1 (unconditional). */
  readonly expectedVersion?: ExpectedVersion | undefined
  readonly op?: string | undefined
  /** The change word of the change entry; default `status`. */
  readonly change?: string | undefined
}

/** What `changeStatus` can end in. */
export type ChangeStatusResult = Effect.Effect<Written, NotFound | VersionConflict | StateMoved | WrongType | InvalidInput | ConnectionError>

const severityProblem = (severity: number): InvalidInput | undefined =>
  Number.isInteger(severity) && severity >= 1 && severity <= 5
    ? undefined
    : new InvalidInput({ field: "severity", message: `severity must be an integer from 1 to 5, got ${severity}` })

const statusProblem = (status: string): InvalidInput | undefined =>
  (ticketStatuses as ReadonlyArray<string>).includes(status)
    ? undefined
    : new InvalidInput({ field: "status", message: `status must be one of ${ticketStatuses.join(", ")}, got '${status}'` })

/** What the ticket functions share: the island's Valkey and the ticket families' key builders. */
interface TicketDeps {
  readonly valkey: ValkeyService
  readonly ticketKey: (id: string) => string | KeyPartError
  readonly listKey: (scope: string) => string | KeyPartError
  readonly statusKey: (scope: string, status: string) => string | KeyPartError
  readonly nudgeChannel: string
}

/** The island's schema with the ticket families registered; a refusal is a bug of this package. */
const ticketDeps = (valkey: ValkeyService): Effect.Effect<TicketDeps> => {
  const keys = valkey.keys.extend(ticketKeys)
  if (keys instanceof KeyFamilyError) return Effect.die(keys)
  return Effect.succeed({
    valkey,
    ticketKey: (id) => keys.key("ticket", { id }),
    listKey: (scope) => keys.key("ticketList", { scope }),
    statusKey: (scope, status) => keys.key("ticketByStatus", { scope, status }),
    nudgeChannel: valkey.keys.key("nudge", { kind: "changes" }) as string
  })
}

/** A put's keys and arguments; the old by-status set depends on the stored status, read first and re-checked by the script. */
const putCall = (deps: TicketDeps) => (input: PutTicket, write: DocumentWrite) => {
  const list = deps.listKey(input.scope)
  if (list instanceof KeyPartError) return list
  const status = deps.statusKey(input.scope, input.status)
  if (status instanceof KeyPartError) return status
  return ([readStatus]: ReadonlyArray<string | null>) => {
    const oldStatus = readStatus ? deps.statusKey(input.scope, readStatus) : write.key
    if (oldStatus instanceof KeyPartError) return oldStatus
    const { expectedVersion, scope, id, op, change, nudgeChannel } = write.args
    return {
      keys: { doc: write.key, list, status, oldStatus, scopes: write.scopes, changes: write.changes },
      args: { expectedVersion, scope, id, op, change, nudgeChannel, doc: input.doc, status: input.status, readStatus: readStatus ?? "", severity: input.severity }
    }
  }
}

/** A delete's keys and arguments: the by-status set of the stored status. */
const deleteCall = (deps: TicketDeps) => (_: DocumentDeleteInput, write: DocumentWrite, [readStatus]: ReadonlyArray<string | null>) => {
  const list = deps.listKey(write.args.scope) // the stored scope
  if (list instanceof KeyPartError) return list
  const status = readStatus ? deps.statusKey(write.args.scope, readStatus) : write.key
  if (status instanceof KeyPartError) return status
  return { keys: { doc: write.key, list, status, scopes: write.scopes, changes: write.changes }, args: { ...write.args, readStatus: readStatus ?? "" } }
}

/** The generic document DAO, described for tickets. */
const ticketDocuments = (deps: TicketDeps) =>
  makeDocumentDao(deps.valkey, {
    kind: "ticket", // the change entries' kind
    noun: "ticket", // NotFound: "ticket {id} does not exist"
    documentKey: deps.ticketKey,
    parse: (id, hash): StoredTicket | undefined => {
      const stored = parseDocumentHash(id, hash)
      return stored && { ...stored, status: hash["status"] ?? "", severity: Number(hash["severity"] ?? 0) }
    },
    put: { script: putTicket, check: (input: PutTicket) => statusProblem(input.status) ?? severityProblem(input.severity), read: ["status"], call: putCall(deps) },
    delete: { script: deleteTicket, read: ["status"], call: deleteCall(deps) },
    list: {
      key: deps.listKey,
      read: (list, offset, count) => typedCommand(deps.valkey, "list tickets", list, "zset", (c) => c.zrange(list, offset, offset + count - 1))
    }
  })

/** One attempt of a status change, from the scope and status read for it (attempt `n`). */
const statusAttempt = (deps: TicketDeps, input: ChangeTicketStatus, key: string, expectedVersion: ExpectedVersion, op: string) => {
  const { valkey } = deps
  const read = typedCommand(valkey, "read ticket status", key, "hash", (c) => c.hmget(key, "scope", "status"))
  return (n: number) =>
    Effect.gen(function* () {
      const [scope, readStatus] = yield* readForWrite(key, n, read)
      if (!scope) return yield* new NotFound({ key, message: `ticket ${input.id} does not exist` })
      const to = deps.statusKey(scope, input.status)
      const from = readStatus ? deps.statusKey(scope, readStatus) : to
      const changes = valkey.keys.key("changes", { scope })
      if (to instanceof KeyPartError) return yield* keyProblem(to)
      if (from instanceof KeyPartError) return yield* keyProblem(from)
      if (changes instanceof KeyPartError) return yield* keyProblem(changes)
      const args = { expectedVersion, scope, id: input.id, op, change: input.change ?? "status", nudgeChannel: deps.nudgeChannel, readStatus: readStatus ?? "", status: input.status }
      const reply = yield* valkey.script(setTicketStatus, { doc: key, from, to, changes }, args)
      return yield* settleWrite(reply, { key, expectedVersion, requestedScope: scope })
    })
}

/**
 * Moves a ticket to `status`. Its by-status sets depend on the stored scope and status, so
 * they are read first and the script re-checks them (`retry`: read again, at most 5 times,
 * then `StateMoved`). An `UnknownOutcome` is passed on: `outcome(id, op)` tells whether it landed.
 */
const changeStatus = (deps: TicketDeps, input: ChangeTicketStatus): ChangeStatusResult =>
  Effect.suspend((): ChangeStatusResult => {
    const expectedVersion = input.expectedVersion ?? -1
    const problem = expectedVersionProblem(expectedVersion) ?? statusProblem(input.status)
    if (problem) return Effect.fail(problem)
    const key = deps.ticketKey(input.id)
    if (key instanceof KeyPartError) return Effect.fail(keyProblem(key))
    const op = input.op ?? newOperationId()
    return retryWhileMoved(key, statusAttempt(deps, input, key, expectedVersion, op)).pipe(Effect.map((version): Written => ({ version, op })))
  })

type ByStatusResult = Effect.Effect<ReadonlyArray<string>, WrongType | InvalidInput | ConnectionError>

/** The ids of a scope's tickets in one status, sorted. */
const byStatus = (deps: TicketDeps, scope: string, status: TicketStatus): ByStatusResult =>
  Effect.suspend((): ByStatusResult => {
    const key = deps.statusKey(scope, status)
    if (key instanceof KeyPartError) return Effect.fail(keyProblem(key))
    return typedCommand(deps.valkey, "tickets by status", key, "set", (c) => c.smembers(key)).pipe(Effect.map((ids) => ids.sort()))
  })

/** Maintenance tickets: the generic document DAO from a spec, plus `changeStatus` and `byStatus`. */
export class TicketDao extends Context.Service<TicketDao>()("@microdcs/example-maintenance-tickets/TicketDao", {
  make: Effect.gen(function* () {
    const deps = yield* ticketDeps(yield* Valkey)
    return {
      ...ticketDocuments(deps),
      changeStatus: (input: ChangeTicketStatus) => changeStatus(deps, input),
      byStatus: (scope: string, status: TicketStatus) => byStatus(deps, scope, status)
    } as const
  })
}) {
  static readonly DefaultWithoutDependencies = Layer.effect(this, this.make)
  static readonly Default = this.DefaultWithoutDependencies
}
