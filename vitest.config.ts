import { defineConfig } from "vitest/config"

// One run for the whole monorepo. Packages are resolved from source through the
// "source" export condition, so tests never need a build first. One Valkey server is
// started per run (test-utils globalSetup); each test file uses its own key prefix.
// vitest 5 loads the global setup in its own `__vitest__` environment, which does not inherit
// the top-level conditions, so that environment names them too.
export default defineConfig({
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  environments: { __vitest__: { resolve: { conditions: ["source"] } } },
  test: {
    include: ["packages/*/test/**/*.test.ts", "apps/*/test/**/*.test.ts", "examples/*/test/**/*.test.ts"],
    globalSetup: ["./packages/test-utils/src/globalSetup.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // V8 tracks its JIT pages with memory protection keys where the CPU has them (PKU), and
    // aborts now and then (`Check failed: jit_page_->allocations_.erase(addr) == 1`) when the
    // embedded PostgreSQL's WebAssembly is compiled and freed in worker threads: a V8 bug, not
    // ours. Without the keys the workers run the same code with no such abort.
    execArgv: ["--no-memory-protection-keys"],
    reporters: process.env.CI ? ["default", ["json", { outputFile: ".vitest-results.json" }]] : ["default"]
  }
})
