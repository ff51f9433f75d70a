import { execFileSync } from "node:child_process"
import { join } from "node:path"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { mosquittoBin, startChildServer, tcpListening, type ChildServer } from "@microdcs/test-utils"

/**
 * A broker that wants credentials, for the daemon's credential tests: no anonymous clients,
 * the given users in a password file made with `mosquitto_passwd` (Debian package mosquitto).
 * Not a test file itself.
 */
export const startPasswordMosquitto = async (users: Readonly<Record<string, string>>): Promise<ChildServer & { readonly url: string }> => {
  const server = await startChildServer({
    name: "mosquitto-password",
    bin: mosquittoBin(),
    args: (port, dir) => {
      const passwords = join(dir, "passwords")
      writeFileSync(passwords, "", { mode: 0o600 })
      for (const [user, password] of Object.entries(users)) execFileSync("mosquitto_passwd", ["-b", passwords, user, password])
      const config = join(dir, "mosquitto.conf")
      writeFileSync(
        config,
        // `user root` only matters when the tests run as root: mosquitto would drop to its own user,
        // which cannot read the password file in our private temp dir.
        [`listener ${port} 127.0.0.1`, "user root", "allow_anonymous false", `password_file ${passwords}`, "persistence false", "log_dest stderr", "log_type error", ""].join("\n")
      )
      return ["-c", config]
    },
    probe: tcpListening
  })
  return { ...server, url: `mqtt://${server.host}:${server.port}` }
}

/** A CA and a server certificate for 127.0.0.1, made with `openssl` in a temp dir of their own. */
export const makeTestCertificates = () => {
  const dir = mkdtempSync(join(tmpdir(), "microdcs-tls-"))
  const at = (name: string) => join(dir, name)
  const openssl = (...args: Array<string>) => execFileSync("openssl", args, { stdio: "ignore" })
  openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", at("ca.key"), "-out", at("ca.pem"), "-days", "1", "-subj", "/CN=microdcs-test-ca")
  openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", at("server.key"), "-out", at("server.csr"), "-subj", "/CN=127.0.0.1")
  writeFileSync(at("ext"), "subjectAltName=IP:127.0.0.1\n")
  openssl("x509", "-req", "-in", at("server.csr"), "-CA", at("ca.pem"), "-CAkey", at("ca.key"), "-CAcreateserial", "-out", at("server.pem"), "-days", "1", "-extfile", at("ext"))
  return { ca: at("ca.pem"), cert: at("server.pem"), key: at("server.key"), remove: () => rmSync(dir, { recursive: true, force: true }) }
}

/** A broker that speaks only TLS (mqtts://) with the given server certificate. */
export const startTlsMosquitto = async (files: { readonly ca: string; readonly cert: string; readonly key: string }) => {
  const server = await startChildServer({
    name: "mosquitto-tls",
    bin: mosquittoBin(),
    args: (port, dir) => {
      const config = join(dir, "mosquitto.conf")
      writeFileSync(
        config,
        [`listener ${port} 127.0.0.1`, "user root", "allow_anonymous true", `cafile ${files.ca}`, `certfile ${files.cert}`, `keyfile ${files.key}`, "persistence false", "log_dest stderr", "log_type error", ""].join("\n")
      )
      return ["-c", config]
    },
    probe: tcpListening
  })
  return { ...server, url: `mqtts://${server.host}:${server.port}` }
}
