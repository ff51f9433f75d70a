import { readdir, readFile, stat } from "node:fs/promises"
import { dirname, join, resolve } from "node:path"
import { Effect } from "effect"
import { CONFIG_KINDS, type ConfigKind, configEventType } from "@microdcs/cloudevents-mqtt"
import { MesInputInvalid } from "./Errors.js"
import { isObject, onlyFields, type Problems, readObject, readText } from "./InputReaders.js"

/** One configuration request the MES sends before its job orders. */
export interface ConfigRequest {
  /** Where it came from (`file` or `file[2]`), for messages. */
  readonly origin: string
  readonly type: string
  readonly data: unknown
  readonly extensions: Readonly<Record<string, string>>
}

/** One job order the MES submits with StoreAndStart. */
export interface JobOrderInput {
  readonly origin: string
  readonly id: string
  /** The ISA-95 job order, its `JobOrderID` set to `id`. */
  readonly jobOrder: Readonly<Record<string, unknown>>
}

export interface MesInput {
  readonly config: ReadonlyArray<ConfigRequest>
  readonly orders: ReadonlyArray<JobOrderInput>
}

export interface MesInputFiles {
  /** Files, or directories whose `*.json` files are read in name order. */
  readonly orders: ReadonlyArray<string>
  readonly config?: ReadonlyArray<string> | undefined
  /** Copies of each job order, numbered `{JobOrderID}-0001`, `-0002`, ...; default: each once, as written. */
  readonly count?: number | undefined
}

/** The JSON files the paths name, in order: a directory stands for its `*.json` files, sorted by name. */
const expandPaths = async (problems: Problems, paths: ReadonlyArray<string>): Promise<ReadonlyArray<string>> => {
  const files: Array<string> = []
  for (const path of paths) {
    const info = await stat(path).catch(() => undefined)
    if (info === undefined) problems.push(`${path}: no such file or directory`)
    else if (!info.isDirectory()) files.push(path)
    else files.push(...(await readdir(path)).filter((name) => name.endsWith(".json")).sort().map((name) => join(path, name)))
  }
  return files
}

const readJson = async (problems: Problems, file: string): Promise<unknown> => {
  try {
    return JSON.parse(await readFile(file, "utf8")) as unknown
  } catch (error) {
    problems.push(`${file}: cannot be read as JSON: ${error instanceof Error ? error.message : String(error)}`)
    return undefined
  }
}

/** A short configuration kind (`workmaster`) stands for its CloudEvent type; anything else is the type itself. */
const configType = (type: string) => ((CONFIG_KINDS as ReadonlyArray<string>).includes(type) ? configEventType(type as ConfigKind) : type)

const readConfigEntry = async (problems: Problems, at: string, file: string, value: unknown): Promise<ConfigRequest | undefined> => {
  const entry = readObject(problems, at, value)
  if (entry === undefined) return undefined
  onlyFields(problems, at, entry, ["type", "data", "file", "extensions", "description"])
  const type = readText(problems, `${at}.type`, entry["type"])
  if (("data" in entry) === ("file" in entry)) problems.push(`${at}: needs exactly one of data and file`)
  const extensions = entry["extensions"] ?? {}
  if (!isObject(extensions) || Object.values(extensions).some((v) => typeof v !== "string")) problems.push(`${at}.extensions: must be an object of texts`)
  const fileName = "file" in entry ? readText(problems, `${at}.file`, entry["file"]) : undefined
  // A file named in the entry is read relative to the file that names it.
  const data = fileName === undefined ? entry["data"] : await readJson(problems, resolve(dirname(file), fileName))
  if (type === undefined || data === undefined) return undefined
  return { origin: at, type: configType(type), data, extensions: extensions as Record<string, string> }
}

const readConfigFile = async (problems: Problems, file: string): Promise<ReadonlyArray<ConfigRequest>> => {
  const content = await readJson(problems, file)
  if (content === undefined) return []
  const entries = Array.isArray(content) ? content.map((entry, i) => [`${file}[${i}]`, entry] as const) : [[file, content] as const]
  const requests = await Promise.all(entries.map(([at, entry]) => readConfigEntry(problems, at, file, entry)))
  return requests.filter((r) => r !== undefined)
}

const readOrderFile = async (problems: Problems, file: string): Promise<ReadonlyArray<JobOrderInput>> => {
  const content = await readJson(problems, file)
  if (content === undefined) return []
  const entries = Array.isArray(content) ? content.map((order, i) => [`${file}[${i}]`, order] as const) : [[file, content] as const]
  return entries.flatMap(([at, order]) => {
    const jobOrder = readObject(problems, at, order)
    const id = jobOrder === undefined ? undefined : readText(problems, `${at}.JobOrderID`, jobOrder["JobOrderID"])
    return jobOrder === undefined || id === undefined ? [] : [{ origin: at, id, jobOrder }]
  })
}

/** `count` copies of each order, numbered with at least four digits. */
const copiesOf = (orders: ReadonlyArray<JobOrderInput>, count: number): ReadonlyArray<JobOrderInput> => {
  const width = Math.max(4, String(count).length)
  return orders.flatMap((order) =>
    Array.from({ length: count }, (_, i) => {
      const id = `${order.id}-${String(i + 1).padStart(width, "0")}`
      return { origin: order.origin, id, jobOrder: { ...order.jobOrder, JobOrderID: id } }
    })
  )
}

const duplicateProblems = (problems: Problems, orders: ReadonlyArray<JobOrderInput>) => {
  const seen = new Map<string, string>()
  for (const order of orders) {
    const first = seen.get(order.id)
    if (first !== undefined) problems.push(`${order.origin}: job order id '${order.id}' is also used by ${first}`)
    else seen.set(order.id, order.origin)
  }
}

const readInput = async (files: MesInputFiles): Promise<MesInput | MesInputInvalid> => {
  const problems: Problems = []
  const count = files.count
  if (count !== undefined && !(Number.isSafeInteger(count) && count >= 1)) problems.push(`count: must be an integer of at least 1, got ${count}`)
  const configFiles = await expandPaths(problems, files.config ?? [])
  const orderFiles = await expandPaths(problems, files.orders)
  const config = (await Promise.all(configFiles.map((file) => readConfigFile(problems, file)))).flat()
  const written = (await Promise.all(orderFiles.map((file) => readOrderFile(problems, file)))).flat()
  if (orderFiles.length > 0 && written.length === 0 && problems.length === 0) problems.push(`orders: ${orderFiles.join(", ")} hold no job order`)
  if (files.orders.length === 0) problems.push("orders: name at least one file or directory of job orders")
  const orders = count === undefined || problems.length > 0 ? written : copiesOf(written, count)
  duplicateProblems(problems, orders)
  return problems.length > 0 ? new MesInputInvalid({ problems }) : { config, orders }
}

/**
 * Reads the MES's input: configuration requests (`{type, data}` or `{type, file}` per entry, a
 * file holding one or a list; `type` a CloudEvent type or a configuration kind such as
 * `workmaster`) and job orders (one or a list per file), copied `count` times. Every problem in
 * every file is listed; nothing is sent.
 */
export const readMesInput = (files: MesInputFiles): Effect.Effect<MesInput, MesInputInvalid> =>
  Effect.flatMap(
    Effect.promise(() => readInput(files)),
    (input) => (input instanceof MesInputInvalid ? Effect.fail(input) : Effect.succeed(input))
  )
