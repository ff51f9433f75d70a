import type {} from "vitest"
import type { TestProject } from "vitest/node"
import { startValkeyServer } from "@microdcs/embedded"

declare module "vitest" {
  export interface ProvidedContext {
    valkeyUrl: string
    valkeyHost: string
    valkeyPort: number
  }
}

/**
 * Vitest global setup: one real server for the whole run, stopped on teardown. A test file that
 * must disturb its server (restart, kill) starts its own with startValkeyServer instead.
 */
export default async function setup(project: TestProject) {
  const server = await startValkeyServer()
  project.provide("valkeyUrl", server.url)
  project.provide("valkeyHost", server.host)
  project.provide("valkeyPort", server.port)
  return async () => {
    await server.stop()
  }
}
