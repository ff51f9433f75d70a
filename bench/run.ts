/**
 * `pnpm bench`: every benchmark against one server, started here unless BENCH_VALKEY_URL is set.
 * Each figure is printed next to a baseline measured in the same run.
 */
import { startValkeyServer } from "@microdcs/test-utils"
import { runStoreBench } from "./store.js"

const main = async () => {
  const external = process.env["BENCH_VALKEY_URL"]
  const server = external ? undefined : await startValkeyServer()
  const url = external ?? server!.url
  console.log(`microdcs-ts benchmarks against ${external ? url : `an embedded server at ${url}`} (node ${process.version})`)
  try {
    await runStoreBench(url)
  } finally {
    await server?.stop()
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
