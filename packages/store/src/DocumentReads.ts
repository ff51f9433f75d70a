import { Effect, type Option } from "effect"
import { KeyPartError } from "@microdcs/keyschema"
import type { StoredDocument } from "./Document.js"
import { type DocumentDeps, fail, notFound } from "./DocumentDeps.js"
import { type ConnectionError, InvalidInput, type NotFound, type WrongType } from "./Errors.js"
import { operationLanded } from "./OutcomeCheck.js"
import { typedCommand, typedPipeline } from "./TypeGuard.js"

type GetResult = Effect.Effect<StoredDocument, NotFound | WrongType | InvalidInput | ConnectionError>
export const get = (deps: DocumentDeps, id: string): GetResult =>
  Effect.suspend((): GetResult => {
    const key = deps.spec.documentKey(id)
    if (key instanceof KeyPartError) return fail(key)
    return typedCommand(deps.valkey, `get ${deps.spec.kind}`, key, "hash", (c) => c.hgetall(key)).pipe(
      Effect.flatMap((hash) => {
        const found = deps.parse(id, hash)
        return found === undefined ? Effect.fail(notFound(deps, key, id)) : Effect.succeed(found)
      })
    )
  })

/** The document keys of `ids`, or the part error of the first that names none. */
const documentKeys = (deps: DocumentDeps, ids: ReadonlyArray<string>): Array<string> | KeyPartError => {
  const keys: Array<string> = []
  for (const id of ids) {
    const key = deps.spec.documentKey(id)
    if (key instanceof KeyPartError) return key
    keys.push(key)
  }
  return keys
}

type ManyResult = Effect.Effect<ReadonlyArray<StoredDocument>, WrongType | InvalidInput | ConnectionError>
export const getMany = (deps: DocumentDeps, ids: ReadonlyArray<string>): ManyResult =>
  Effect.suspend((): ManyResult => {
    if (!Array.isArray(ids)) return Effect.fail(new InvalidInput({ field: "ids", message: "ids must be an array" }))
    if (ids.length === 0) return Effect.succeed([])
    const keys = documentKeys(deps, ids)
    if (keys instanceof KeyPartError) return fail(keys)
    const { valkey, spec, parse } = deps
    // One id needs no pipeline object: a plain HGETALL, and a missing one builds no error.
    if (keys.length === 1) {
      const [key] = keys as [string]
      return typedCommand(valkey, `get ${spec.kind}s`, key, "hash", (c) => c.hgetall(key)).pipe(
        Effect.map((hash) => {
          const found = parse(ids[0]!, hash)
          return found === undefined ? [] : [found]
        })
      )
    }
    return typedPipeline<Record<string, string>>(valkey, `get ${spec.kind}s`, keys, "hash", (p, key) => p.hgetall(key)).pipe(
      Effect.map((hashes) => ids.flatMap((id, i) => parse(id, hashes[i] ?? {}) ?? []))
    )
  })

type OutcomeResult = Effect.Effect<Option.Option<number>, WrongType | InvalidInput | ConnectionError>
export const outcome = (deps: DocumentDeps, id: string, op: string): OutcomeResult =>
  Effect.suspend((): OutcomeResult => {
    const key = deps.spec.documentKey(id)
    return key instanceof KeyPartError ? fail(key) : operationLanded(deps.valkey, key, op, { kind: deps.spec.kind, id })
  })
