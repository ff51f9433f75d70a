/**
 * A small aligned-table renderer for the human output. Cells come from the island's data (ids,
 * error texts, consumer names), which an operator's terminal must never interpret: control
 * characters are shown escaped, so a crafted id cannot move the cursor or recolour the screen.
 */

export interface Column<Row> {
  readonly header: string
  readonly value: (row: Row) => string | number | null | undefined
  /** Numbers read best right-aligned; default left. */
  readonly align?: "left" | "right"
}

// C0 controls, DEL and C1 controls.
// eslint-disable-next-line no-control-regex
const controlCharacters = /[\u0000-\u001f\u007f-\u009f]/g

/** The text as it may be printed: control characters as `\xNN`. */
export const printable = (text: string): string =>
  text.replace(controlCharacters, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`)

const cellText = (value: string | number | null | undefined): string =>
  value === null || value === undefined || value === "" ? "-" : printable(String(value))

/** Width in code points; wide East Asian glyphs are rare in ids and not worth a width table. */
const width = (text: string): number => [...text].length

const pad = (text: string, to: number, align: "left" | "right"): string => {
  const fill = " ".repeat(Math.max(0, to - width(text)))
  return align === "right" ? fill + text : text + fill
}

/**
 * Rows under a header, columns two spaces apart, trailing blanks trimmed. An empty table is a
 * single `(none)` line, so an operator never mistakes it for a command that printed nothing.
 */
export const renderTable = <Row>(columns: ReadonlyArray<Column<Row>>, rows: ReadonlyArray<Row>, empty = "(none)"): string => {
  if (rows.length === 0) return empty
  const cells = rows.map((row) => columns.map((c) => cellText(c.value(row))))
  const widths = columns.map((c, i) => Math.max(width(c.header), ...cells.map((r) => width(r[i]!))))
  const line = (texts: ReadonlyArray<string>) =>
    texts
      .map((t, i) => pad(t, widths[i]!, columns[i]!.align ?? "left"))
      .join("  ")
      .trimEnd()
  return [line(columns.map((c) => c.header)), ...cells.map(line)].join("\n")
}

/** `label: value` lines with the values aligned, for a single record (a job order, a lease). */
export const renderFields = (fields: ReadonlyArray<readonly [string, string | number | null | undefined]>): string => {
  const labelWidth = Math.max(0, ...fields.map(([label]) => width(label) + 1))
  return fields.map(([label, value]) => `${pad(`${label}:`, labelWidth, "left")}  ${cellText(value)}`).join("\n")
}

/** A titled section: the title, then the body. Sections are joined by a blank line. */
export const section = (title: string, body: string): string => `${title}\n${body}`

export const sections = (...parts: ReadonlyArray<string>): string => parts.join("\n\n")
