import { defineKeyFamilies, KeyFamilyError, KeyPartError } from "@microdcs/keyschema"

/** An extension's families, as a team would write them: one of each kind of template and rule. */
export const widgetFamilies = defineKeyFamilies({
  widget: "widget:{id}",
  widgetList: "widget:list:{scope}",
  widgetByColor: { template: "widget:bycolor:{scope}:{color}", parts: { color: { oneOf: ["red", "green"] } } },
  widgetSerial: {
    template: "widget:serial:{n}",
    parts: { n: { accepts: (value) => /^[0-9]+$/.test(value), examples: ["1", "42"], description: "a decimal number" } }
  },
  widgetEvent: "widget:event:{source}|{id}",
  // Same shape as the core `ref:{kind}:{scope}`, told apart by rules: no reference kind is a robot kind.
  robotRef: { template: "ref:{robotKind}:{scope}", parts: { robotKind: { oneOf: ["arm", "agv"] } } },
  // A literal where the core has a ruled part: `tools` is no reference kind.
  toolRef: "ref:tools:{scope}",
  // A literal where the core has a free part, in a template one token longer than `joborder:{id}`.
  jobOrderNotes: "joborder:notes:{id}"
})

/** The value, or the test fails with the refusal's message. */
export const ok = <A>(value: A | KeyPartError | KeyFamilyError): A => {
  if (value instanceof KeyPartError || value instanceof KeyFamilyError) throw new Error(value.message)
  return value
}
