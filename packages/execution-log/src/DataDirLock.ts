import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"

/**
 * PGlite opens a data directory that another process has open without a word, and two writers
 * corrupt it. A lock file in the directory (`microdcs.lock`, the holder's pid) keeps a second
 * daemon on the same machine out; one left by a process that is gone is taken over.
 */
export const LOCK_FILE = "microdcs.lock"

/** Directories this process holds: a lock naming our own pid is stale unless it is in here (a restarted container is pid 1 again). */
const held = new Set<string>()

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as { readonly code?: unknown }).code === "EPERM"
  }
}

/** Who holds the lock in `dir`, when that holder still runs. */
const liveHolder = (file: string, dir: string): number | undefined => {
  let text: string
  try {
    text = readFileSync(file, "utf8")
  } catch {
    return undefined // released meanwhile
  }
  const pid = Number(text.trim())
  if (!Number.isInteger(pid) || pid <= 0) return undefined
  if (pid === process.pid) return held.has(dir) ? pid : undefined
  return isAlive(pid) ? pid : undefined
}

/**
 * Creates `dir` when missing and locks it for this process; throws when a live process holds it.
 * Returns the release.
 */
export const lockDataDir = (dir: string): (() => void) => {
  const absolute = resolve(dir)
  mkdirSync(absolute, { recursive: true })
  const file = join(absolute, LOCK_FILE)
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(file, `${process.pid}\n`, { flag: "wx" })
      held.add(absolute)
      return () => {
        held.delete(absolute)
        rmSync(file, { force: true })
      }
    } catch (error) {
      if ((error as { readonly code?: unknown }).code !== "EEXIST") throw error
    }
    const holder = liveHolder(file, absolute)
    if (holder !== undefined) {
      throw new Error(`the data directory ${absolute} is in use by process ${holder} (${LOCK_FILE}); each embedded database needs a directory of its own`)
    }
    rmSync(file, { force: true })
  }
  throw new Error(`could not lock the data directory ${absolute}: its ${LOCK_FILE} keeps coming back`)
}
