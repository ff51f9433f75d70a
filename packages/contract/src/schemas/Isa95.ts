import type { JsonObject } from "../Json.js"
import { arrayOf, closedObject, englishText, finishedStateList, idText, localizedText, object, text } from "./Common.js"

/**
 * The ISA-95 documents of job control (OPC 10031-4 data types in their JSON form): the job
 * order the island takes and the job response it writes.
 */

/** A requirement entry the island checks by `ID` (equipment, personnel, physical asset). */
const requirementById = (what: string): JsonObject =>
  object({ ID: idText(`The ${what}; it must be in the scope's ${what} list.`) }, ["ID"], { description: `OPC UA ISA95${what}DataType; other fields are kept as sent.` })

/**
 * The job order (ISA95JobOrderDataType). The island reads the fields named here and keeps every
 * other field as it came; each referenced id must be configured in the scope first.
 */
export const jobOrderSchema: JsonObject = object(
  {
    JobOrderID: idText("The job order's id, unique on the island."),
    Description: { description: "OPC UA: LocalizedText[]; kept as sent." },
    Priority: { type: "number", description: "Higher runs first; 0 when absent." },
    WorkMasterID: arrayOf(
      object({ ID: idText("A work master of the scope; the first one's recipe runs the job.") }, ["ID"], { description: "OPC UA ISA95WorkMasterDataType." }),
      { description: "The work masters; the island runs the recipe of the first. Without one, the job order is the MES's to move." }
    ),
    EquipmentRequirements: arrayOf(requirementById("Equipment")),
    PersonnelRequirements: arrayOf(requirementById("Personnel")),
    PhysicalAssetRequirements: arrayOf(requirementById("PhysicalAsset")),
    MaterialRequirements: arrayOf(
      object(
        {
          MaterialClassID: idText("A material class of the scope's list."),
          MaterialDefinitionID: idText("A material definition of the scope's list.")
        },
        [],
        { description: "OPC UA ISA95MaterialDataType; other fields (lot, sublot, quantity) are kept as sent." }
      )
    ),
    JobOrderParameters: arrayOf({ type: "object" }, { description: "OPC UA ISA95ParameterDataType[]; kept as sent." })
  },
  ["JobOrderID"],
  { description: "An ISA-95 job order (OPC UA ISA95JobOrderDataType) as the island takes it: the fields listed are checked, any other is kept as sent." }
)

/** The fields every actual has beside its id, as OPC UA lists them (copied from the job order as sent). */
const actualFields = (use: string) => ({
  Description: { description: "As the job order gave it (OPC UA: LocalizedText[])." },
  [use]: { description: "As the job order gave it." },
  Quantity: { description: "As the job order gave it." },
  EngineeringUnits: { description: "As the job order gave it (OPC UA EUInformation)." }
})

const actualById = (what: string, use: string): JsonObject =>
  object({ ID: text(`The ${what}.`), ...actualFields(use) }, ["ID"], { description: `OPC UA ISA95${what}DataType: what the job ran with.` })

const parameter: JsonObject = object(
  {
    ID: text("The result's key."),
    Value: { description: "Any JSON value." },
    Description: arrayOf(localizedText),
    EngineeringUnits: { type: "object" },
    Subparameters: arrayOf({ $ref: "#/$defs/ISA95ParameterDataType" })
  },
  ["ID", "Value"],
  { additionalProperties: false, description: "OPC UA ISA95ParameterDataType." }
)

/**
 * The job response (ISA95JobResponseDataType) the island writes once a job ended: published
 * retained on the result topic and answered by the job response queries.
 */
export const jobResponseV2Schema: JsonObject = closedObject(
  {
    JobResponseID: text("The response's id (deterministic per job order)."),
    Description: { ...englishText, description: "Present when the job failed: why." },
    JobOrderID: text("The job order it answers."),
    StartTime: text("When the job started.", { format: "date-time" }),
    EndTime: text("When it ended.", { format: "date-time" }),
    JobState: finishedStateList,
    JobResponseData: arrayOf({ $ref: "#/$defs/ISA95ParameterDataType" }, { description: "The recipe's result data: one parameter per top-level key." }),
    PersonnelActuals: arrayOf(actualById("Personnel", "PersonnelUse")),
    EquipmentActuals: arrayOf(actualById("Equipment", "EquipmentUse")),
    PhysicalAssetActuals: arrayOf(actualById("PhysicalAsset", "PhysicalAssetUse")),
    MaterialActuals: arrayOf(
      object(
        {
          MaterialClassID: { type: "string" },
          MaterialDefinitionID: { type: "string" },
          MaterialLotID: { type: "string" },
          MaterialSublotID: { type: "string" },
          ...actualFields("MaterialUse")
        },
        [],
        { description: "OPC UA ISA95MaterialDataType: what the job ran with." }
      )
    )
  },
  ["JobResponseID", "JobOrderID", "StartTime", "EndTime", "JobState", "JobResponseData", "PersonnelActuals", "EquipmentActuals", "PhysicalAssetActuals", "MaterialActuals"],
  {
    description:
      "The job response (OPC UA ISA95JobResponseDataType) the island writes once a job order ended: its final state, the recipe's result data, and the job order's requirements as what the job ran with.",
    $defs: { ISA95ParameterDataType: parameter }
  }
)
