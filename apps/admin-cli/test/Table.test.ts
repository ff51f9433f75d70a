import { describe, expect, it } from "vitest"
import { printable, renderFields, renderTable } from "../src/Table.js"

describe("renderTable", () => {
  const columns = [
    { header: "ID", value: (r: { id: string; n: number | null }) => r.id },
    { header: "COUNT", value: (r: { id: string; n: number | null }) => r.n, align: "right" as const }
  ]

  it("aligns columns under their headers, numbers to the right, blanks as '-'", () => {
    expect(renderTable(columns, [{ id: "a", n: 5 }, { id: "longer-id", n: 12345 }, { id: "c", n: null }])).toBe(
      ["ID         COUNT", "a              5", "longer-id  12345", "c              -"].join("\n")
    )
  })

  it("prints an explicit line for an empty table", () => {
    expect(renderTable(columns, [])).toBe("(none)")
    expect(renderTable(columns, [], "(no job orders)")).toBe("(no job orders)")
  })

  it("escapes control characters from stored data, so a crafted id cannot drive the terminal", () => {
    expect(printable("evil\u001b[2Jid\nnext\u0085")).toBe("evil\\x1b[2Jid\\x0anext\\x85")
    expect(renderTable(columns, [{ id: "a\tb", n: 1 }])).toContain("a\\x09b")
  })
})

describe("renderFields", () => {
  it("aligns values after their labels", () => {
    expect(renderFields([["id", "jo-1"], ["work master", null], ["version", 3]])).toBe(
      ["id:           jo-1", "work master:  -", "version:      3"].join("\n")
    )
  })
})
