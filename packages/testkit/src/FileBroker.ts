import { afterAll, beforeAll } from "vitest"
import { type MosquittoServer, startMosquitto } from "@microdcs/test-utils"

/**
 * One throw-away mosquitto for the test file that calls this at its top level: started before the
 * file's first test, stopped after its last. Read `url` inside tests (it is not known before).
 */
export const mosquittoForFile = (): { readonly url: string } => {
  let server: MosquittoServer | undefined
  beforeAll(async () => {
    server = await startMosquitto()
  })
  afterAll(async () => {
    await server?.stop()
  })
  return {
    get url() {
      if (server === undefined) throw new Error("the file's mosquitto is not started yet: read url inside a test")
      return server.url
    }
  }
}
