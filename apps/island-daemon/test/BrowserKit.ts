import { existsSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type BrowserContext, chromium, type Page } from "playwright-core"

/**
 * Debian's chromium for the console's browser tests, launched as ConsoleBrowser.test.ts does
 * (headless, its own throw-away profile). Not a test file itself.
 */

export const CHROMIUM = "/usr/bin/chromium"
export const hasChromium = existsSync(CHROMIUM)

export interface Browser {
  readonly context: BrowserContext
  /** Opens `url` in a new page; `errors` collects the page's script errors. */
  readonly open: (url: string) => Promise<{ readonly page: Page; readonly errors: Array<string> }>
  readonly close: () => Promise<void>
}

/** A headless chromium with a fresh profile, in `timezoneId` when given (the console shows times in the browser's zone). */
export const launchBrowser = async (options: { readonly timezoneId?: string } = {}): Promise<Browser> => {
  const profile = await mkdtemp(join(tmpdir(), "console-chromium-"))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    viewport: { width: 1280, height: 1000 },
    ...(options.timezoneId === undefined ? {} : { timezoneId: options.timezoneId })
  })
  const open = async (url: string) => {
    const page = await context.newPage()
    const errors: Array<string> = []
    page.on("pageerror", (error) => errors.push(String(error)))
    await page.goto(url)
    return { page, errors }
  }
  const close = async () => {
    await context.close()
    await rm(profile, { recursive: true, force: true })
  }
  return { context, open, close }
}
