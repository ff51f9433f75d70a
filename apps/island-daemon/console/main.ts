import { h, link, replace } from "./dom.js"
import { configPage } from "./pages/config.js"
import { incidentsPage } from "./pages/incidents.js"
import { islandPage } from "./pages/island.js"
import { jobPage } from "./pages/job.js"
import { scopePage } from "./pages/scope.js"
import { streamsPage } from "./pages/streams.js"
import { searchPage } from "./search.js"

/**
 * The island console in the browser: the daemon answers every console path with the same page,
 * and this script draws the one the path names from the JSON API, then follows the live feed.
 */
const start = () => {
  const app = document.getElementById("app")!
  const nav = h("header", {}, h("strong", {}, "Island console"), " ", link("/console", "island"), " ", link("/console/config", "configuration"), " ", link("/console/streams", "streams"), " ", link("/console/incidents", "incidents"), " ", link("/console/search", "search"))
  const main = h("main", { id: "page" })
  replace(app, nav, main)
  const path = location.pathname
  const part = (prefix: string) => (path.startsWith(prefix) ? decodeURIComponent(path.slice(prefix.length)) : undefined)
  const job = part("/console/jobs/")
  const scope = part("/console/scopes/")
  if (job !== undefined) jobPage(main, job)
  else if (scope !== undefined) scopePage(main, scope)
  else if (path === "/console/config") configPage(main)
  else if (path === "/console/streams") streamsPage(main)
  else if (path === "/console/incidents") void incidentsPage(main)
  else if (path === "/console/search") searchPage(main)
  else islandPage(main)
}

start()
