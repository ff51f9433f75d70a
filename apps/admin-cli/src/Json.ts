/** A stored document's text as JSON for the output; text that is not JSON stays text. */
export const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

export const prettyJson = (value: unknown): string => JSON.stringify(value, null, 2)
