/**
 * The fields of an ISA-95 job order (OPC UA ISA95JobOrderDataType, as the MES sends it) that a
 * condition's `order.<field>` may start with; what lies below them is the MES's to fill.
 */
export const jobOrderFields: ReadonlyArray<string> = [
  "JobOrderID",
  "Description",
  "WorkMasterID",
  "StartTime",
  "EndTime",
  "Priority",
  "JobOrderParameters",
  "PersonnelRequirements",
  "EquipmentRequirements",
  "PhysicalAssetRequirements",
  "MaterialRequirements"
]
