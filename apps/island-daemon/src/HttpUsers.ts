import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { Config, Effect, Option, Redacted, Result } from "effect"
import { allProblems, checkedString, everyProblem, invalidSetting, reported } from "./ConfigChecks.js"

/**
 * Who may use the HTTP API, and how far. A viewer reads (`/metrics`, `/api/*`, the console's
 * pages); an operator also acts (the console's POST routes). Each user is known by the SHA-256 of
 * its bearer token, so no token is kept in memory as text after start (nor logged: redacted).
 */
export const httpRoles = ["viewer", "operator"] as const
export type HttpRole = (typeof httpRoles)[number]

export interface HttpUser {
  /** Named in the audit trail as `console:{name}`. */
  readonly name: string
  readonly role: HttpRole
  /** The SHA-256 of the token, hex. */
  readonly digest: Redacted.Redacted<string>
}

/** A token's SHA-256, hex: what a user is known by. */
export const tokenDigest = (token: string): string => createHash("sha256").update(token).digest("hex")

/** A plain token shorter than this is refused: easy to guess. */
export const MIN_TOKEN_LENGTH = 16
const NAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/
const SHA256 = /^sha256:([0-9a-fA-F]{64})$/

interface Parsed {
  readonly line: number
  readonly user: HttpUser
}

/** One line `name role token`: the user, or every problem of the line. */
const parseLine = (text: string, line: number): Result.Result<Parsed, ReadonlyArray<string>> => {
  const fields = text.trim().split(/\s+/)
  if (fields.length !== 3) return Result.fail([`line ${line}: expected "name role token", found ${fields.length} field${fields.length === 1 ? "" : "s"}`])
  const [name, role, token] = fields as [string, string, string]
  const problems: Array<string> = []
  // The fields' values are never echoed: a line written in another order would put its token in the log.
  if (!NAME.test(name)) problems.push(`line ${line}: the name (first field) must be 1 to 64 letters, digits or . _ @ - (starting with a letter or digit)`)
  if (!(httpRoles as ReadonlyArray<string>).includes(role)) problems.push(`line ${line}: the role (second field) is not one of ${httpRoles.join(", ")}`)
  const hashed = SHA256.exec(token)
  if (hashed === null && token.startsWith("sha256:")) problems.push(`line ${line}: a sha256: token must be 64 hex digits`)
  else if (hashed === null && token.length < MIN_TOKEN_LENGTH) problems.push(`line ${line}: the token is shorter than ${MIN_TOKEN_LENGTH} characters`)
  if (problems.length > 0) return Result.fail(problems)
  const digest = hashed === null ? tokenDigest(token) : hashed[1]!.toLowerCase()
  return Result.succeed({ line, user: { name, role: role as HttpRole, digest: Redacted.make(digest) } })
}

/** Two users with one name, or one token: each pair named by its lines. */
const duplicates = (parsed: ReadonlyArray<Parsed>): ReadonlyArray<string> => {
  const problems: Array<string> = []
  parsed.forEach((a, i) => {
    for (const b of parsed.slice(i + 1)) {
      if (a.user.name === b.user.name) problems.push(`lines ${a.line} and ${b.line}: the name ${a.user.name} is given twice`)
      if (Redacted.value(a.user.digest) === Redacted.value(b.user.digest)) problems.push(`lines ${a.line} and ${b.line}: the same token is given twice`)
    }
  })
  return problems
}

/**
 * The users of a token file's text: one per line, `name role token` separated by blanks, where
 * `token` is the bearer token itself or `sha256:{64 hex digits}` (its SHA-256); blank lines and
 * lines starting with `#` are skipped. Every problem of the file at once, each naming its line.
 */
export const parseTokenFile = (text: string): Result.Result<ReadonlyArray<HttpUser>, ReadonlyArray<string>> => {
  const parsed: Array<Parsed> = []
  const problems: Array<string> = []
  text.split(/\r?\n/).forEach((raw, at) => {
    if (raw.trim() === "" || raw.trim().startsWith("#")) return
    Result.match(parseLine(raw, at + 1), { onSuccess: (p) => void parsed.push(p), onFailure: (ps) => void problems.push(...ps) })
  })
  problems.push(...duplicates(parsed))
  if (parsed.length === 0 && problems.length === 0) problems.push("the file names no user")
  return problems.length > 0 ? Result.fail(problems) : Result.succeed(parsed.map((p) => p.user))
}

const readTokenFile = (path: string): Result.Result<ReadonlyArray<HttpUser>, ReadonlyArray<string>> => {
  try {
    return parseTokenFile(readFileSync(path, "utf8"))
  } catch (error) {
    const code = (error as { code?: unknown }).code
    return Result.fail([`cannot read ${path}${typeof code === "string" ? ` (${code})` : ""}`])
  }
}

const tokenSetting = (variable: string) =>
  Config.option(checkedString(variable, (t) => (t.length > 0 ? undefined : `${variable} must not be empty`)).pipe(Config.map((t) => Redacted.make(t))))

const fileSetting = Config.option(Config.String("HTTP_TOKEN_FILE")).pipe(
  Config.mapEffect((path) => {
    if (Option.isNone(path)) return Effect.succeed(undefined)
    const read = readTokenFile(path.value)
    if (Result.isSuccess(read)) return Effect.succeed(read.success)
    return Effect.fail(allProblems(read.failure.map((p) => invalidSetting("HTTP_TOKEN_FILE", p)))!)
  })
)

const envUser = (name: HttpRole, token: Option.Option<Redacted.Redacted<string>>): ReadonlyArray<HttpUser> =>
  Option.isNone(token) ? [] : [{ name, role: name, digest: Redacted.make(tokenDigest(Redacted.value(token.value))) }]

/**
 * The HTTP users: `HTTP_TOKEN` (user `viewer`), `HTTP_OPERATOR_TOKEN` (user `operator`), or
 * `HTTP_TOKEN_FILE` (named users with roles) instead of both. None: the API is open to read and
 * nobody may act (the console's actions answer 403).
 */
export const httpUsersSetting: Config.Config<ReadonlyArray<HttpUser>> = Config.all({
  viewer: reported(tokenSetting("HTTP_TOKEN")),
  operator: reported(tokenSetting("HTTP_OPERATOR_TOKEN")),
  file: reported(fileSetting)
}).pipe(
  Config.mapEffect((results) => everyProblem(results, Result.all(results))),
  Config.mapEffect(({ viewer, operator, file }) => {
    const fromEnv = [...envUser("viewer", viewer), ...envUser("operator", operator)]
    if (file !== undefined && fromEnv.length > 0) return Effect.fail(invalidSetting("HTTP_TOKEN_FILE", "set it instead of HTTP_TOKEN and HTTP_OPERATOR_TOKEN, not beside them"))
    if (fromEnv.length === 2 && Redacted.value(fromEnv[0]!.digest) === Redacted.value(fromEnv[1]!.digest)) {
      return Effect.fail(invalidSetting("HTTP_OPERATOR_TOKEN", "must differ from HTTP_TOKEN (one token, one role)"))
    }
    return Effect.succeed(file ?? fromEnv)
  })
)
