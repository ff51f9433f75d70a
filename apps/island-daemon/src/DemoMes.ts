import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { type MesProgress, readMesInput, runMes } from "@microdcs/island-sim"

const SCOPE = "line-1"

const fixture = (path: string) => fileURLToPath(new URL(`../fixtures/demo/${path}`, import.meta.url))

/** The submitted, completed and failed counts on one line (rewritten in place on a terminal). */
const showProgress = (p: MesProgress) => {
  const line = `  submitted ${p.submitted}/${p.total}  completed ${p.completed}  failed ${p.failed}`
  process.stdout.write(process.stdout.isTTY ? `\r${line}` : `${line}\n`)
}

/**
 * The MES side of the demo: the island-sim MES on its own MQTT connection. It sends the
 * configuration of `fixtures/demo/config.json` (the station's reference lists, the torque journal
 * by tool with the `nok_torque_1h` counter the recipe reads, and the axle work master), then
 * `jobs` copies of `fixtures/demo/orders/axle.json` (jo-axle-0001, jo-axle-0002, ...) with
 * StoreAndStart, and follows the scope's status events until every job has ended.
 */
export const runDemoMes = (url: string, topics: { readonly prefix: string; readonly discriminator?: string | undefined }, jobs: number) =>
  Effect.gen(function* () {
    const input = yield* readMesInput({ config: [fixture("config.json")], orders: [fixture("orders")], count: jobs })
    const report = yield* runMes({
      mqtt: { url, connectTimeoutMs: 5000 },
      topics,
      scope: SCOPE,
      input,
      log: (line) => console.log(line),
      onProgress: showProgress,
      progressEveryMs: process.stdout.isTTY ? 200 : 1000
    })
    process.stdout.write(`${process.stdout.isTTY ? "\r" : ""}  submitted ${report.submitted}/${input.orders.length}  completed ${report.completed}  failed ${report.failed}\n`)
    return report
  })
