/**
 * What an MQTT UTF-8 string may hold (MQTT 5 §1.5.4), as mosquitto enforces it: it drops the whole
 * connection on the first string it refuses ("Malformed UTF-8"), and a persistent session then
 * resends the same packet after every reconnect. So a string is checked before it is sent, and
 * text that came from untrusted input is made sendable instead of refused.
 */

// U+0000 is forbidden; U+0001..U+001F and U+007F..U+009F (control characters) and the
// noncharacters U+FDD0..U+FDEF and U+xFFFE/U+xFFFF of every plane "should not" be sent, and
// mosquitto refuses every one of them.
const planeNonCharacters = Array.from({ length: 16 }, (_, i) => `\\u{${(i + 1).toString(16)}fffe}\\u{${(i + 1).toString(16)}ffff}`).join("")
const REFUSED = new RegExp(`[\\u{0}-\\u{1f}\\u{7f}-\\u{9f}\\u{fdd0}-\\u{fdef}\\u{fffe}\\u{ffff}${planeNonCharacters}]`, "u")
const REFUSED_ALL = new RegExp(REFUSED.source, "gu")
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/

/** Most bytes of an MQTT string (a two-byte length prefix). */
export const MAX_MQTT_STRING_BYTES = 65535

/**
 * Why a value cannot be an MQTT string, if it cannot: NUL or another control character, a
 * noncharacter, a lone surrogate (it does not survive UTF-8), or more than 65535 bytes.
 */
export const mqttStringProblem = (value: string): string | undefined => {
  const refused = REFUSED.exec(value)
  if (refused) {
    const code = `U+${(refused[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0")}`
    return value.includes("\u0000") ? "contains NUL" : CONTROL.test(refused[0]) ? `contains the control character ${code}` : `contains the noncharacter ${code}`
  }
  if (!value.isWellFormed()) return "contains a lone surrogate"
  // A UTF-16 unit is at most 3 UTF-8 bytes, so most strings skip the byte count.
  if (value.length * 3 > MAX_MQTT_STRING_BYTES && Buffer.byteLength(value, "utf8") > MAX_MQTT_STRING_BYTES) return `is longer than ${MAX_MQTT_STRING_BYTES} bytes`
  return undefined
}

export const isMqttString = (value: string): boolean => mqttStringProblem(value) === undefined

const escape = (char: string): string => {
  const code = char.codePointAt(0) ?? 0
  // Control characters keep their identity as a JSON-style escape; noncharacters carry none.
  return code <= 0x9f ? `\\u${code.toString(16).padStart(4, "0")}` : "\uFFFD"
}

/**
 * Text from untrusted input (an id echoed in an error message, a type in a log line) made safe to
 * send as an MQTT string and to log: control characters become `\uXXXX` escapes, noncharacters and
 * lone surrogates U+FFFD, and the result has at most `maxChars` UTF-16 units (default 1000), so it
 * is always far below the 65535-byte limit. Valid text shorter than the bound comes back unchanged.
 */
export const toMqttString = (text: string, maxChars = 1000): string => {
  const escaped = text.slice(0, maxChars).replace(REFUSED_ALL, escape)
  // Slicing can split a surrogate pair; toWellFormed mends that and any lone surrogate.
  return (escaped.length > maxChars ? escaped.slice(0, maxChars) : escaped).toWellFormed()
}
