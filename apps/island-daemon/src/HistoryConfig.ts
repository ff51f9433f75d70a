import { Config, Option } from "effect"
import { checkedString } from "./ConfigChecks.js"

/** Where the console's history comes from: unset, the daemon's own 24 hours; set, a Prometheus server. */
export interface HistorySettings {
  /** `HISTORY_PROMETHEUS_URL`: the Prometheus server's base address (http or https, no credentials in it). */
  readonly prometheusUrl: string | undefined
  /** `HISTORY_PROMETHEUS_MATCHERS`: label matchers added to every query (`job="island-a"`), for a server that scrapes several islands. */
  readonly prometheusMatchers: string | undefined
}

const urlProblem = (text: string): string | undefined => {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return "HISTORY_PROMETHEUS_URL must be an absolute http:// or https:// address"
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "HISTORY_PROMETHEUS_URL must use http or https"
  if (url.username !== "" || url.password !== "") return "HISTORY_PROMETHEUS_URL must not carry a user or password"
  if (url.search !== "" || url.hash !== "") return "HISTORY_PROMETHEUS_URL must be the server's base address, without query or fragment"
  return undefined
}

const MATCHER = String.raw`\s*[A-Za-z_][A-Za-z0-9_]*\s*(=|!=|=~|!~)\s*"(?:[^"\\]|\\.)*"\s*`
const MATCHERS = new RegExp(`^${MATCHER}(,${MATCHER})*$`)

/** The two settings, each checked where it is read and reported on its own (the daemon's configuration lists every problem). */
export const prometheusUrlSetting = Config.option(checkedString("HISTORY_PROMETHEUS_URL", urlProblem)).pipe(Config.map(Option.getOrUndefined))
export const prometheusMatchersSetting = Config.option(
  checkedString("HISTORY_PROMETHEUS_MATCHERS", (text) =>
    MATCHERS.test(text) ? undefined : 'HISTORY_PROMETHEUS_MATCHERS must be PromQL label matchers separated by commas, e.g. job="island-a"'
  )
).pipe(Config.map(Option.getOrUndefined))
