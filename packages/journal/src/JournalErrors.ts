import { Data } from "effect"

/** A journal configuration was refused; every problem is listed and nothing was stored. */
export class JournalConfigInvalid extends Data.TaggedError("JournalConfigInvalid")<{
  readonly scope: string
  readonly journal: string | undefined
  readonly problems: ReadonlyArray<string>
}> {
  override get message() {
    return `journal configuration${this.journal === undefined ? "" : ` '${this.journal}'`} of scope '${this.scope}' refused: ${this.problems.join("; ")}`
  }
}

/** The scope has no journal (or no counter) of that name. */
export class JournalNotFound extends Data.TaggedError("JournalNotFound")<{
  readonly scope: string
  readonly journal: string
  readonly counter?: string | undefined
}> {
  override get message() {
    return this.counter === undefined
      ? `scope '${this.scope}' has no journal '${this.journal}'`
      : `journal '${this.journal}' of scope '${this.scope}' has no counter '${this.counter}'`
  }
}

/**
 * The scope has a journal of that name stored, but its configuration does not read back (written
 * by another version, edited by hand, a `when` this process has no condition language for): it is
 * not in use until fixed or configured again.
 */
export class JournalUnreadable extends Data.TaggedError("JournalUnreadable")<{
  readonly scope: string
  readonly journal: string
  readonly problems: ReadonlyArray<string>
}> {
  override get message() {
    return `journal '${this.journal}' of scope '${this.scope}' is stored but cannot be read: ${this.problems.join("; ")}`
  }
}

/** A stored entry that cannot be decoded (another format version, a corrupted value). */
export class CorruptEntry extends Data.TaggedError("CorruptEntry")<{
  readonly key: string
  readonly id: string
  readonly message: string
}> {}

/**
 * The configurations a record would consult have not been read (the process has not loaded them
 * yet, or their load failed): whether a journal names the event cannot be told, so nothing is
 * journaled and the caller learns it, instead of an empty answer that looks like "no journal".
 */
export class JournalNotLoaded extends Data.TaggedError("JournalNotLoaded")<{
  readonly scope: string | undefined
  readonly reason: string
}> {
  override get message() {
    return `journal configurations${this.scope === undefined ? "" : ` of scope '${this.scope}'`} not loaded: ${this.reason}`
  }
}
