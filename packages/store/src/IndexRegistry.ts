import { Context, Effect, Layer } from "effect"
import { type FamilyTemplates, KeyFamilyError, type KeySchema, type KeySchemaOf } from "@microdcs/keyschema"
import { InvalidInput } from "./Errors.js"
import { coreIndexedFamilies } from "./IndexCoreFamilies.js"
import type { IndexedFamily } from "./IndexedFamily.js"

/**
 * The families `IndexMaintenance` checks and rebuilds, in walk order. The default holds the core
 * ones; an extension adds its own with {@link IndexRegistry.with}, provided to the layer that
 * builds `IndexMaintenance` (it reads the registry once, when it is built):
 *
 * ```ts
 * IndexMaintenance.Default.pipe(Layer.provide(IndexRegistry.with(widgetIndexes)))
 * ```
 */
export class IndexRegistry extends Context.Reference<{ readonly families: ReadonlyArray<IndexedFamily> }>("@microdcs/store/IndexRegistry", {
  defaultValue: () => ({ families: coreIndexedFamilies })
}) {
  /**
   * The registry in context (the core families by default) with `families` walked after its own.
   * Layers of several extensions stack: `Layer.provide(IndexRegistry.with(b), IndexRegistry.with(a))`.
   */
  static with(...families: ReadonlyArray<IndexedFamily>): Layer.Layer<never> {
    return Layer.effect(IndexRegistry, Effect.map(IndexRegistry, (registry) => ({ families: [...registry.families, ...families] })))
  }
}

/**
 * The island's key schema with the key families of every registered family, or why the
 * registry cannot be walked (two families of one name, a version that is no integer from 1, key
 * families the schema refuses).
 */
export const registrySchema = (
  keys: KeySchema,
  families: ReadonlyArray<IndexedFamily>
): KeySchemaOf<FamilyTemplates> | InvalidInput => {
  const names = new Set<string>()
  let schema = keys as unknown as KeySchemaOf<FamilyTemplates>
  for (const family of families) {
    if (names.has(family.name)) {
      return new InvalidInput({ field: "indexedFamilies", message: `two indexed families are named '${family.name}'` })
    }
    names.add(family.name)
    if (family.version !== undefined && !(Number.isSafeInteger(family.version) && family.version >= 1)) {
      return new InvalidInput({ field: "indexedFamilies", message: `indexed family '${family.name}' has version ${family.version}; a version is an integer from 1` })
    }
    if (family.keyFamilies === undefined) continue
    const extended = schema.extend(family.keyFamilies)
    if (extended instanceof KeyFamilyError) {
      return new InvalidInput({ field: "indexedFamilies", message: `the key families of indexed family '${family.name}' are refused: ${extended.message}` })
    }
    schema = extended
  }
  return schema
}
