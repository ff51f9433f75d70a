import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Result } from "effect"
import { defaultEngineOptions, engineOptionsConfig } from "@microdcs/sfc-runtime"

/** The execution log's engine options from `SFC_EXECUTION_LOG*` (bad values are refused by name). */

const read = (env: Record<string, string>) =>
  Effect.result(Effect.provideService(engineOptionsConfig, ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown(env)))

describe("engine options: the execution log", () => {
  it("is on by default, with a cap of 5000", () => {
    expect(defaultEngineOptions).toMatchObject({ executionLog: true, executionLogCap: 5000 })
  })

  it.effect("reads SFC_EXECUTION_LOG, _CAP, _QUEUE_SIZE and _DETAIL_BYTES", () =>
    Effect.gen(function* () {
      const options = yield* read({
        SFC_EXECUTION_LOG: "false", SFC_EXECUTION_LOG_CAP: "200", SFC_EXECUTION_LOG_QUEUE_SIZE: "0", SFC_EXECUTION_LOG_DETAIL_BYTES: "512"
      })
      expect(Result.getOrThrow(options)).toMatchObject({ executionLog: false, executionLogCap: 200, executionLogQueueSize: 0, executionLogDetailBytes: 512 })
    })
  )

  it.effect("refuses a negative cap or queue size and a detail bound under 16 bytes, naming the variable", () =>
    Effect.gen(function* () {
      for (const [name, value] of [["SFC_EXECUTION_LOG_CAP", "-1"], ["SFC_EXECUTION_LOG_QUEUE_SIZE", "-5"], ["SFC_EXECUTION_LOG_DETAIL_BYTES", "8"]] as const) {
        const result = yield* read({ [name]: value })
        expect(Result.isFailure(result)).toBe(true)
        if (Result.isFailure(result)) expect(String(result.failure)).toContain(name)
      }
    })
  )
})
