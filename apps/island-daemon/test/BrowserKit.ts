import { existsSync } from "node:fs"
import { mkdir, mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { type BrowserContext, chromium, type Page } from "playwright-core"

/**
 * The console's browser tests' kit: Debian's chromium driven by playwright-core, one persistent
 * context per test file in a profile of its own, pages that record script errors, and
 * screenshots in `test-artifacts/`.
 */

export const CHROMIUM = "/usr/bin/chromium"
export const hasChromium = existsSync(CHROMIUM)
export const ARTIFACTS = fileURLToPath(new URL("../test-artifacts/", import.meta.url))

export interface Browser {
  readonly context: BrowserContext
  /** Opens `path` of the daemon at `base` in a new page; `errors` collects its script errors. */
  readonly open: (path: string) => Promise<{ readonly page: Page; readonly errors: Array<string> }>
  readonly close: () => Promise<void>
}

/**
 * A headless chromium with a fresh profile; `base()` is the daemon's address (read when a page
 * opens), `timezoneId` the browser's zone when given (the console shows times in it).
 */
export const launchBrowser = async (base: () => string, options: { readonly timezoneId?: string } = {}): Promise<Browser> => {
  await mkdir(ARTIFACTS, { recursive: true })
  const profile = await mkdtemp(join(tmpdir(), "console-chromium-"))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    viewport: { width: 1280, height: 1000 },
    ...(options.timezoneId === undefined ? {} : { timezoneId: options.timezoneId })
  })
  const open = async (path: string) => {
    const page = await context.newPage()
    const errors: Array<string> = []
    page.on("pageerror", (error) => errors.push(String(error)))
    await page.goto(`${base()}${path}`)
    return { page, errors }
  }
  const close = async () => {
    await context.close()
    await rm(profile, { recursive: true, force: true })
  }
  return { context, open, close }
}

/** A full-page screenshot `test-artifacts/{name}.png`. */
export const shot = (page: Page, name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true })

/** Waits until `selector` shows text matching `text` (a string matches a part of it). */
export const waitText = (page: Page, selector: string, text: string | RegExp, timeout = 30_000) =>
  page.locator(selector).filter({ hasText: text }).first().waitFor({ timeout })
