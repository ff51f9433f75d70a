import type { ScriptDescriptor } from "./ScriptDescriptor.js"

/** A script's opening `--[[ ... ]]` comment, and the code after it. */
export const splitHeader = (source: string): { readonly header: string; readonly body: string } => {
  const match = /^--\[\[([\s\S]*?)\]\]/.exec(source)
  return { header: match?.[1] ?? "", body: source.slice(match?.[0].length ?? 0) }
}

/**
 * What is wrong with a script's header, by the rules every script here follows (BullMQ style):
 * it opens with a comment that lists every KEYS entry of its key count, every ARGV entry the code
 * uses, and its replies; the code uses no literal KEYS index past the key count. Empty when the
 * header holds. Exported so an extension's tests hold its scripts to the same rules:
 * `expect(scriptHeaderProblems(myScript)).toEqual([])`.
 */
export const scriptHeaderProblems = (script: Pick<ScriptDescriptor<string, unknown, unknown>, "file" | "source" | "numberOfKeys">): ReadonlyArray<string> => {
  const { header, body } = splitHeader(script.source)
  if (header.trim() === "") return [`${script.file}: no header comment (--[[ ... ]]) at the top`]
  const problems: Array<string> = []
  for (let i = 1; i <= script.numberOfKeys; i++) {
    if (!header.includes(`KEYS[${i}]`)) problems.push(`${script.file}: KEYS[${i}] is not documented in the header`)
  }
  for (const used of new Set([...body.matchAll(/ARGV\[(\d+)\]/g)].map((m) => Number(m[1])))) {
    if (!header.includes(`ARGV[${used}]`)) problems.push(`${script.file}: ARGV[${used}] is used but not documented in the header`)
  }
  for (const used of new Set([...body.matchAll(/KEYS\[(\d+)\]/g)].map((m) => Number(m[1])))) {
    if (used > script.numberOfKeys) problems.push(`${script.file}: KEYS[${used}] is past the key count ${script.numberOfKeys} of its file name`)
  }
  if (!/Repl(y|ies)/.test(header)) problems.push(`${script.file}: the header does not list the replies (Reply/Replies)`)
  if (script.source.includes("@include")) problems.push(`${script.file}: an @include was not spliced`)
  return problems
}
