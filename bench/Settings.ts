/** Sizes of every benchmark; small values (BENCH_SAMPLES=200) make a quick smoke run. */
export const SAMPLES = Number(process.env["BENCH_SAMPLES"] ?? 2000)
export const THROUGHPUT_OPS = Number(process.env["BENCH_THROUGHPUT_OPS"] ?? 20000)
export const IN_FLIGHT = 64
