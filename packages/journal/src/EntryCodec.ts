import { compressSync, uncompressSync } from "lz4-napi"
import { Packr, Unpackr } from "msgpackr"

/**
 * The compact encoding of a journal entry: MessagePack in which every object key
 * the journal's field table knows is replaced by its small integer, in an envelope
 * `[format version, flags, body]` (one byte each before the body). Flag bit 0: the body is LZ4
 * (block) compressed. A key the table does not know yet stays a text: the insert script assigns it
 * an integer in the same step, and later entries use that. Decoding maps integers back to names.
 */

export const ENTRY_FORMAT_VERSION = 1
const LZ4 = 0b0000_0001

// Plain MessagePack: no msgpackr records (a private extension), maps kept as maps so integer keys stay integers.
const packr = new Packr({ useRecords: false, moreTypes: false, variableMapSize: true })
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: false })

/** A journal's field table in memory: name → integer and back. Only ever grows. */
export class FieldTable {
  private readonly byName = new Map<string, number>()
  private readonly byIndex = new Map<number, string>()

  get size(): number {
    return this.byName.size
  }

  indexOf(name: string): number | undefined {
    return this.byName.get(name)
  }

  nameOf(index: number): string | undefined {
    return this.byIndex.get(index)
  }

  learn(name: string, index: number): void {
    this.byName.set(name, index)
    this.byIndex.set(index, name)
  }

  entries(): ReadonlyArray<readonly [string, number]> {
    return [...this.byName]
  }
}

const isPlainObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value) && !Buffer.isBuffer(value) && !(value instanceof Date)

/** The tree with object keys as integers where the table has them; the names it lacked go to `unknown`. */
const toIndexed = (value: unknown, table: FieldTable, unknown: Set<string>): unknown => {
  if (Array.isArray(value)) return value.map((v) => toIndexed(v, table, unknown))
  if (!isPlainObject(value)) return value
  const map = new Map<string | number, unknown>()
  for (const [name, v] of Object.entries(value)) {
    if (v === undefined) continue
    const index = table.indexOf(name)
    if (index === undefined) unknown.add(name)
    map.set(index ?? name, toIndexed(v, table, unknown))
  }
  return map
}

/** Thrown only for bytes no encoder here wrote (a bug or a corrupted value); callers turn it into a typed error. */
export class EntryDecodeError extends Error {
  constructor(message: string) {
    super(message)
    this.name = "EntryDecodeError"
  }
}

const fromIndexed = (value: unknown, table: FieldTable): unknown => {
  if (Array.isArray(value)) return value.map((v) => fromIndexed(v, table))
  if (!(value instanceof Map)) return value
  const out: Record<string, unknown> = {}
  for (const [key, v] of value) {
    const name = typeof key === "number" ? table.nameOf(key) : String(key)
    if (name === undefined) throw new EntryDecodeError(`field index ${key} is not in the journal's field table`)
    // defineProperty: a field named __proto__ stays a field.
    Object.defineProperty(out, name, { value: fromIndexed(v, table), enumerable: true, writable: true, configurable: true })
  }
  return out
}

export interface Encoded {
  readonly bytes: Buffer
  /** Object keys the table did not know: the insert script assigns them integers. */
  readonly newFields: ReadonlyArray<string>
}

export const encodeEntry = (entry: unknown, table: FieldTable, compression: "none" | "lz4"): Encoded => {
  const unknown = new Set<string>()
  const body = packr.pack(toIndexed(entry, table, unknown))
  const compressed = compression === "lz4"
  const payload = compressed ? compressSync(body) : body
  const bytes = Buffer.allocUnsafe(2 + payload.length)
  bytes[0] = ENTRY_FORMAT_VERSION
  bytes[1] = compressed ? LZ4 : 0
  payload.copy(bytes, 2)
  return { bytes, newFields: [...unknown] }
}

/** The entry back, names restored; an `EntryDecodeError` for bytes no encoder here wrote, or an index the table lacks. */
export const decodeEntry = (bytes: Buffer, table: FieldTable): unknown => {
  if (bytes.length < 2) throw new EntryDecodeError("an entry shorter than its envelope")
  if (bytes[0] !== ENTRY_FORMAT_VERSION) throw new EntryDecodeError(`entry format version ${bytes[0]} is not known (this build reads ${ENTRY_FORMAT_VERSION})`)
  const flags = bytes[1]!
  const payload = bytes.subarray(2)
  const body = flags & LZ4 ? uncompressSync(payload) : payload
  return fromIndexed(unpackr.unpack(body), table)
}

/** Whether the entry names a field index the table lacks (another writer assigned it since the table was read). */
export const lacksFields = (error: unknown): boolean => error instanceof EntryDecodeError && /field index/.test(error.message)

/** The plain encodings the benchmark compares with: MessagePack with names, and JSON. */
export const encodePlainMessagePack = (entry: unknown): Buffer => packr.pack(entry)
export const decodePlainMessagePack = (bytes: Buffer): unknown => new Unpackr({ useRecords: false }).unpack(bytes)
