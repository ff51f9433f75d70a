import { type ChildProcess, fork } from "node:child_process"

/**
 * BENCH_CHILD_PROF=dir: each child writes a CPU profile there when it exits, run from the built
 * packages (`pnpm build` first) so the profile names their functions.
 */
const childExecArgv = (): Array<string> => {
  const profileDir = process.env["BENCH_CHILD_PROF"]
  // `--no-memory-protection-keys`: as the daemon runs (its README, "Embedded PostgreSQL").
  const base = ["--no-memory-protection-keys", "--import", "tsx"]
  return profileDir ? [...base, "--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [...base, "--conditions=source"]
}

/**
 * A benchmark child process (`node --import tsx --conditions=source script`) with its config in
 * the environment variable `envName` (JSON), talking over IPC: `message(type)` resolves with the
 * first message of that type, and rejects if the child exits first.
 */
export const forkChild = <From extends { readonly type: string }, To>(script: string, name: string, envName: string, config: unknown) => {
  const child = fork(script, [], {
    execArgv: childExecArgv(),
    env: { ...process.env, [envName]: JSON.stringify(config) },
    stdio: ["ignore", "inherit", "inherit", "ipc"]
  })
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  const message = <T extends From["type"]>(type: T) => {
    const first = new Promise<Extract<From, { readonly type: T }>>((resolve, reject) => {
      const on = (m: From) => {
        if (m.type !== type) return
        child.off("message", on)
        resolve(m as Extract<From, { readonly type: T }>)
      }
      child.on("message", on)
      void exited.then((code) => reject(new Error(`${name} exited (${code}) before "${type}"`)))
    })
    // Awaited later; an early exit must not be an unhandled rejection meanwhile.
    first.catch(() => undefined)
    return first
  }
  return { child, exited, message, tell: (m: To) => void child.send(m as object) }
}

/** Waits for a child to exit; ends it (only ours, by its own handle) if the run failed or it hangs. */
export const reap = async (child: ChildProcess, exited: Promise<unknown>, failed: boolean) => {
  if (failed) child.kill()
  const timer = setTimeout(() => child.kill("SIGKILL"), 20_000)
  await exited
  clearTimeout(timer)
}
