import { readFileSync } from "node:fs"
import { Config, ConfigError, Result } from "effect"

/**
 * Checks of settings that the packages would otherwise only refuse once the island starts
 * (as an `InvalidInput` or `InvalidTopic` trace, exit 1): made at start, so a bad value exits 2
 * with a message that names the variable.
 */

/** Why a key prefix cannot be used (the key schema's rule for the prefix), or `undefined`. */
export const prefixProblem = (prefix: string): string | undefined => {
  if (prefix.length === 0) return "must not be empty"
  if (prefix.includes(":")) return "must not contain ':' (it separates the key parts)"
  if (!prefix.isWellFormed()) return "is not well-formed UTF-8"
  if (Buffer.byteLength(prefix, "utf8") > 512) return "is longer than 512 bytes"
  return undefined
}

/** A TLS file (PEM) named by a variable: read at start, so a missing or unreadable file is a configuration error. */
export const pemFile = (name: string): Config.Config<{ readonly path: string; readonly pem: Buffer } | undefined> =>
  Config.String(name).pipe(
    Config.mapOrFail((path) => {
      try {
        return Result.succeed({ path, pem: readFileSync(path) })
      } catch (error) {
        const code = (error as { code?: unknown }).code
        return Result.fail(ConfigError.InvalidData([], `cannot read ${path}${typeof code === "string" ? ` (${code})` : ""}`))
      }
    }),
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
  if (files.cert !== undefined && files.key === undefined) problems.push(ConfigError.InvalidData([name("KEY")], `is required with ${name("CERT")}`))
  if (files.key !== undefined && files.cert === undefined) problems.push(ConfigError.InvalidData([name("CERT")], `is required with ${name("KEY")}`))
  if (!usesTls) {
    const how = service === "VALKEY" ? "a rediss:// VALKEY_URL or VALKEY_TLS=true" : "an mqtts:// MQTT_URL"
    for (const file of ["CA", "CERT", "KEY"] as const) {
      if (files[file.toLowerCase() as "ca" | "cert" | "key"] !== undefined) problems.push(ConfigError.InvalidData([name(file)], `is set but the connection is not TLS; use ${how}`))
    }
  }
  return problems
}

/** Several problems as one configuration error, so each is reported. */
export const allProblems = (problems: ReadonlyArray<Config.ConfigError>): Config.ConfigError | undefined =>
  problems.length === 0 ? undefined : problems.reduce((a, b) => ConfigError.And(a, b))
