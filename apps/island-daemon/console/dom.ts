/**
 * Building the page from data, safely: every text goes in with `textContent` and every
 * attribute with `setAttribute`, never through markup, so an id or a recipe name from outside
 * shows as what it is.
 */

import { formatTime, utcText, utcTitle } from "./time.js"

export type Child = Node | string | number | null | undefined | false | ReadonlyArray<Child>

const append = (parent: Node, child: Child): void => {
  if (child === null || child === undefined || child === false) return
  if (Array.isArray(child)) {
    for (const c of child as ReadonlyArray<Child>) append(parent, c)
    return
  }
  parent.appendChild(typeof child === "object" ? (child as Node) : document.createTextNode(String(child)))
}

/** An HTML element: attributes (`class`, `href`, `data-*`) as text, children appended. */
export const h = (tag: string, attributes: Readonly<Record<string, string | undefined>> = {}, ...children: ReadonlyArray<Child>): HTMLElement => {
  const element = document.createElement(tag)
  for (const [name, value] of Object.entries(attributes)) if (value !== undefined) element.setAttribute(name, value)
  for (const child of children) append(element, child)
  return element
}

const SVG = "http://www.w3.org/2000/svg"

/** An SVG element, the same way. */
export const s = (tag: string, attributes: Readonly<Record<string, string | number | undefined>> = {}, ...children: ReadonlyArray<Child>): SVGElement => {
  const element = document.createElementNS(SVG, tag)
  for (const [name, value] of Object.entries(attributes)) if (value !== undefined) element.setAttribute(name, String(value))
  for (const child of children) append(element, child)
  return element
}

/** Replaces what `parent` holds. */
export const replace = (parent: Element, ...children: ReadonlyArray<Child>): void => {
  parent.replaceChildren()
  for (const child of children) append(parent, child)
}

/** A link inside the console (a path built from encoded parts). */
export const link = (href: string, ...children: ReadonlyArray<Child>) => h("a", { href }, ...children)

export const jobHref = (id: string) => `/console/jobs/${encodeURIComponent(id)}`
export const scopeHref = (scope: string) => `/console/scopes/${encodeURIComponent(scope)}`

/**
 * A time as the console shows it, the one helper every page's times go through: a `<time>` with
 * the date, local time and zone offset as its text (time.ts) and the UTC instant in `datetime`
 * and on hover (`title`). Nothing for no time.
 */
export const when = (epochMs: number | null | undefined): HTMLElement | "" =>
  epochMs === null || epochMs === undefined ? "" : h("time", { datetime: utcText(epochMs), title: utcTitle(epochMs) }, formatTime(epochMs))

/** A table from a header and rows of cells. */
export const table = (headers: ReadonlyArray<string>, rows: ReadonlyArray<HTMLElement>, attributes: Readonly<Record<string, string>> = {}) =>
  h("table", attributes, h("thead", {}, h("tr", {}, headers.map((x) => h("th", {}, x)))), h("tbody", {}, rows))

export const section = (title: string, ...children: ReadonlyArray<Child>) => h("section", {}, h("h2", {}, title), ...children)
