import { Effect, Exit, Layer, Result, Scope } from "effect"
import { afterAll, beforeAll } from "vitest"
import { decodeJobOrderRecord, normalizedName } from "@microdcs/job-state"
import { InProcessStation, SfcEngineProcesses, SfcRuntimeServices } from "@microdcs/sfc-runtime"
import { JobOrderDao, storeLayer, WorkMasterDao } from "@microdcs/store"
import { type Cli, makeCli } from "./Cli.js"
import { SCOPE, withStore } from "./Seed.js"

/**
 * What a file whose commands act on running jobs needs: the CLI, and an SFC engine beside it (as a
 * daemon would run it) over the file's prefix, with an in-process station and the file's work
 * master stored. Started before the file's first test, stopped after its last; read `cli` inside tests.
 */
export const engineBeside = (
  url: string,
  prefix: string,
  options: { readonly consumer: string; readonly station?: Parameters<typeof InProcessStation>[0]; readonly workMaster: { readonly ID: string } }
) => {
  const scope = Effect.runSync(Scope.make())
  const engine = SfcEngineProcesses({ consumer: options.consumer }).pipe(
    Layer.provideMerge(InProcessStation(options.station).layer),
    Layer.provideMerge(SfcRuntimeServices),
    Layer.provideMerge(storeLayer({ url, prefix }))
  )
  const state: { cli?: Cli } = {}
  beforeAll(async () => {
    state.cli = await makeCli(url, prefix)
    await Effect.runPromise(Layer.buildWithScope(engine, scope))
    const doc = JSON.stringify(options.workMaster)
    await withStore(url, prefix, Effect.flatMap(WorkMasterDao, (dao) => dao.put({ id: options.workMaster.ID, scope: SCOPE, doc, expectedVersion: -1 })))
  }, 60_000)
  afterAll(async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    state.cli?.dispose()
  })
  return {
    get cli(): Cli {
      if (state.cli === undefined) throw new Error("the CLI is not started yet: read cli inside a test")
      return state.cli
    },
    /** The job order's state name, as stored. */
    stateOf: (id: string) =>
      withStore(url, prefix, Effect.map(Effect.flatMap(JobOrderDao, (dao) => dao.get(id)), (s) => normalizedName(Result.getOrThrow(decodeJobOrderRecord(s.doc)).state)))
  }
}

/** Reads until `ok` holds (every 50 ms, at most 20 s): the CLI's reads are promises, not effects. */
export const readUntil = async <A>(read: () => Promise<A>, ok: (value: A) => boolean, what: string): Promise<A> => {
  const deadline = Date.now() + 20_000
  for (;;) {
    const value = await read()
    if (ok(value)) return value
    if (Date.now() > deadline) throw new Error(`${what} not reached: ${JSON.stringify(value)}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
