import { Data } from "effect"

/** The failures a user of the sandbox can act on; each says what is wrong in its message. */

const listed = (problems: ReadonlyArray<string>) => problems.map((p) => `  - ${p}`).join("\n")
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`

/** A station script that cannot be used: every problem found, nothing started. */
export class ScriptInvalid extends Data.TaggedError("ScriptInvalid")<{
  /** The file, when the script came from one. */
  readonly file: string | undefined
  readonly problems: ReadonlyArray<string>
}> {
  override get message() {
    const where = this.file === undefined ? "station script" : `station script ${this.file}`
    return `${where} has ${plural(this.problems.length, "problem")}:\n${listed(this.problems)}`
  }
}

/** An emit for a scope the station does not serve: it speaks for its own scopes only. */
export class StationScopeUnknown extends Data.TaggedError("StationScopeUnknown")<{
  readonly scope: string
  readonly scopes: ReadonlyArray<string>
}> {
  override get message() {
    return `scope '${this.scope}' is not one of the station's (${this.scopes.join(", ")})`
  }
}

/** MES input (configuration requests, job orders) that cannot be sent: every problem found, nothing sent. */
export class MesInputInvalid extends Data.TaggedError("MesInputInvalid")<{
  readonly problems: ReadonlyArray<string>
}> {
  override get message() {
    return `MES input has ${plural(this.problems.length, "problem")}:\n${listed(this.problems)}`
  }
}

/** The island refused a configuration request, or did not answer it: no job order was sent. */
export class ConfigRefused extends Data.TaggedError("ConfigRefused")<{
  /** Where the request came from (file and entry). */
  readonly origin: string
  readonly type: string
  readonly reason: string
}> {
  override get message() {
    return `${this.origin}: ${this.type} refused: ${this.reason}`
  }
}
