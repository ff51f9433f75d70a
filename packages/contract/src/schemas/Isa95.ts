import type { JsonObject } from "../Json.js"
import { arrayOf, idText, object } from "./Common.js"

/**
 * The ISA-95 documents of job control (OPC 10031-4 data types in their JSON form): the job
 * order the island takes. The job response's schema is generated from its model in
 * `@microdcs/job-state` (`jobResponseJsonSchema`), the one its readers decode with.
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
