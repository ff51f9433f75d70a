import { readFileSync } from "node:fs"
import { Config, Effect, Result, Schema, SchemaIssue } from "effect"

/**
 * Checks of settings that the packages would otherwise only refuse once the island starts
 * (as an `InvalidInput` or `InvalidTopic` trace, exit 1): made at start, so a bad value exits 2
 * with a message that names the variable.
 */

/** A problem with one variable's value, as the configuration error that names the variable. */
export const invalidSetting = (variable: string, message: string): Config.ConfigError =>
  new Config.ConfigError(new Schema.SchemaError(new SchemaIssue.Pointer([variable], new SchemaIssue.InvalidValue({ message }))))

/** A text setting checked where it is read: `check` returns the problem, so the error names the variable. */
export const checkedString = (variable: string, check: (text: string) => string | undefined): Config.Config<string> =>
  Config.schema(Schema.String.check(Schema.makeFilter((text: string) => check(text))), variable)

/** An integer setting with one check, whose failure names the variable. */
export const checkedInt = (variable: string, check: (n: number) => string | undefined): Config.Config<number> =>
  Config.schema(Schema.Int.check(Schema.makeFilter((n: number) => check(n))), variable)

/** A text setting turned into a value, or refused with the problem `parse` names (the error names the variable). */
export const parsedString = <A>(variable: string, parse: (text: string) => Result.Result<A, string>): Config.Config<A> =>
  Config.String(variable).pipe(
    Config.mapEffect((text) =>
      Result.match(parse(text), { onFailure: (problem) => Effect.fail(invalidSetting(variable, problem)), onSuccess: (value) => Effect.succeed(value) })
    )
  )

/** Why a key prefix cannot be used (the key schema's rule for the prefix), or `undefined`. */
export const prefixProblem = (prefix: string): string | undefined => {
  if (prefix.length === 0) return "must not be empty"
  if (prefix.includes(":")) return "must not contain ':' (it separates the key parts)"
  if (!prefix.isWellFormed()) return "is not well-formed UTF-8"
  if (Buffer.byteLength(prefix, "utf8") > 512) return "is longer than 512 bytes"
  return undefined
}

const readPem = (path: string): Result.Result<{ readonly path: string; readonly pem: Buffer }, string> => {
  try {
    return Result.succeed({ path, pem: readFileSync(path) })
  } catch (error) {
    const code = (error as { code?: unknown }).code
    return Result.fail(`cannot read ${path}${typeof code === "string" ? ` (${code})` : ""}`)
  }
}

/** A TLS file (PEM) named by a variable: read at start, so a missing or unreadable file is a configuration error. */
export const pemFile = (name: string): Config.Config<{ readonly path: string; readonly pem: Buffer } | undefined> =>
  parsedString(name, readPem).pipe(
    Config.option,
    Config.map((o) => (o._tag === "Some" ? o.value : undefined))
  )

/** The three TLS files of a service (`{service}_TLS_CA_FILE`, `_CERT_FILE`, `_KEY_FILE`). */
export const tlsFiles = (service: "VALKEY" | "MQTT") =>
  Config.all({ ca: pemFile(`${service}_TLS_CA_FILE`), cert: pemFile(`${service}_TLS_CERT_FILE`), key: pemFile(`${service}_TLS_KEY_FILE`) })

/** Both halves of a client certificate, or neither; TLS files only where the connection is TLS. */
export const tlsProblems = (
  service: "VALKEY" | "MQTT",
  files: { readonly ca: unknown; readonly cert: unknown; readonly key: unknown },
  usesTls: boolean
): ReadonlyArray<Config.ConfigError> => {
  const problems: Array<Config.ConfigError> = []
  const name = (file: string) => `${service}_TLS_${file}_FILE`
  if (files.cert !== undefined && files.key === undefined) problems.push(invalidSetting(name("KEY"), `is required with ${name("CERT")}`))
  if (files.key !== undefined && files.cert === undefined) problems.push(invalidSetting(name("CERT"), `is required with ${name("KEY")}`))
  if (!usesTls) {
    const how = service === "VALKEY" ? "a rediss:// VALKEY_URL or VALKEY_TLS=true" : "an mqtts:// MQTT_URL"
    for (const file of ["CA", "CERT", "KEY"] as const) {
      if (files[file.toLowerCase() as "ca" | "cert" | "key"] !== undefined) problems.push(invalidSetting(name(file), `is set but the connection is not TLS; use ${how}`))
    }
  }
  return problems
}

/**
 * Several problems as one configuration error, so each is reported. A source error (the
 * environment could not be read) is reported alone.
 */
export const allProblems = (problems: ReadonlyArray<Config.ConfigError>): Config.ConfigError | undefined => {
  if (problems.length <= 1) return problems[0]
  const issues: Array<SchemaIssue.Issue> = []
  for (const problem of problems) {
    if (problem.cause._tag === "SourceError") return problem
    issues.push(problem.cause.issue)
  }
  const [first, ...rest] = issues
  return first === undefined ? undefined : new Config.ConfigError(new Schema.SchemaError(new SchemaIssue.Composite(Schema.Unknown.ast, [first, ...rest])))
}

/** A setting that always reads: its value, or its error, kept to be reported with the others'. */
export const reported = <A>(config: Config.Config<A>): Config.Config<Result.Result<A, Config.ConfigError>> =>
  config.pipe(
    Config.map((value) => Result.succeed(value)),
    Config.orElse((error) => Config.succeed(Result.fail(error)))
  )

/**
 * The values of a record of `reported` settings (`values`: `Result.all` of it), or one error with
 * every problem among them, where effect's `Config.all` stops at the first:
 * `Config.all({...}).pipe(Config.mapEffect((r) => everyProblem(r, Result.all(r))))`.
 */
export const everyProblem = <A>(
  results: Readonly<Record<string, Result.Result<unknown, Config.ConfigError>>>,
  values: Result.Result<A, Config.ConfigError>
): Effect.Effect<A, Config.ConfigError> => {
  const problems = allProblems(Object.values(results).flatMap((r) => (Result.isFailure(r) ? [r.failure] : [])))
  return problems === undefined ? Effect.fromResult(values) : Effect.fail(problems)
}

/** The failures in a configuration error, each `VARIABLE: message` (one line each). */
export const configFailures = (error: Config.ConfigError): ReadonlyArray<string> => {
  if (error.cause._tag === "SourceError") return [error.cause.message]
  return SchemaIssue.makeFormatterStandardSchemaV1()(error.cause.issue).issues.map(({ path, message }) => {
    const text = message.replace(/\s*\n\s*/g, " ")
    return path !== undefined && path.length > 0 ? `${path.map(String).join("_")}: ${text}` : text
  })
}
