import { Effect } from "effect"

/** Latency figures of one operation, in milliseconds. */
export interface Latency {
  readonly name: string
  readonly samples: number
  readonly median: number
  readonly p99: number
}

const percentile = (sorted: ReadonlyArray<number>, p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN

export const summarize = (name: string, samples: ReadonlyArray<number>): Latency => {
  const sorted = [...samples].sort((a, b) => a - b)
  return { name, samples: sorted.length, median: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) }
}

/**
 * Times `run` one call at a time (a round trip each), after a warm-up. `run` gets the index of
 * the call so it can vary its input.
 */
export const latency = <E, R>(
  name: string,
  options: { readonly warmup: number; readonly samples: number },
  run: (i: number) => Effect.Effect<unknown, E, R>
): Effect.Effect<Latency, E, R> =>
  Effect.gen(function* () {
    for (let i = 0; i < options.warmup; i++) yield* run(i)
    const samples: Array<number> = []
    for (let i = 0; i < options.samples; i++) {
      const start = performance.now()
      yield* run(options.warmup + i)
      samples.push(performance.now() - start)
    }
    return summarize(name, samples)
  })

/** Operations per second with `inFlight` calls outstanding at all times. */
export const throughputOf = async (total: number, inFlight: number, run: (i: number) => Promise<unknown>): Promise<number> => {
  let next = 0
  const start = performance.now()
  const worker = async () => {
    while (next < total) await run(next++)
  }
  await Promise.all(Array.from({ length: inFlight }, worker))
  return total / ((performance.now() - start) / 1000)
}

const fmt = (n: number, digits = 3) => n.toFixed(digits)

/** Prints latencies next to the baseline, as a table with the ratio and an optional target. */
export const printLatencies = (
  baseline: Latency,
  rows: ReadonlyArray<Latency & { readonly target?: number }>
): void => {
  console.log(`  ${"operation".padEnd(52)} ${"median ms".padStart(10)} ${"p99 ms".padStart(9)} ${"× PING".padStart(8)}  target`)
  for (const row of [baseline, ...rows]) {
    const ratio = row.median / baseline.median
    const limit = (row as { readonly target?: number }).target
    const target = limit !== undefined ? `≤ ${limit.toFixed(1)}× ${ratio <= limit ? "ok" : "MISSED"}` : ""
    console.log(`  ${row.name.padEnd(52)} ${fmt(row.median).padStart(10)} ${fmt(row.p99).padStart(9)} ${fmt(ratio, 2).padStart(8)}  ${target}`)
  }
}

/**
 * Operations per second of an Effect with `inFlight` calls outstanding: `inFlight` worker fibers
 * each run calls back to back, the same shape as {@link throughputOf} for promises.
 */
export const throughputOfEffect = <E, R>(
  total: number,
  inFlight: number,
  run: (i: number) => Effect.Effect<unknown, E, R>
): Effect.Effect<number, E, R> =>
  Effect.suspend(() => {
    let next = 0
    // A plain loop, not `Effect.repeat`: a schedule per call cost more than an Effect.promise
    // of the raw client, and was counted against whatever was measured.
    const worker: Effect.Effect<void, E, R> = Effect.suspend(() => (next < total ? Effect.flatMap(run(next++), () => worker) : Effect.void))
    const start = performance.now()
    return Effect.all(Array.from({ length: inFlight }, () => worker), { concurrency: "unbounded", discard: true }).pipe(
      Effect.map(() => total / ((performance.now() - start) / 1000))
    )
  })

/** Prints a throughput next to the raw figure it is measured against, with the target share. */
export const printThroughput = (label: string, raw: number, ours: number, targetShare: number): void => {
  const share = ours / raw
  console.log(`  ${`${label}, raw iovalkey EVALSHA`.padEnd(52)} ${raw.toFixed(0).padStart(10)}`)
  console.log(
    `  ${`${label}, through the store`.padEnd(52)} ${ours.toFixed(0).padStart(10)} ${`${(share * 100).toFixed(0)}%`.padStart(8)}  ` +
      `of raw, target ≥ ${(targetShare * 100).toFixed(0)}% ${share >= targetShare ? "ok" : "MISSED"}`
  )
}
