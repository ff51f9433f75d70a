// The station: its script (decoded and checked, every problem listed), and the station over MQTT.
export type { CommandRule, Delay, EventScript, Occurrence, Resend, ScheduledEvent, StationScript, TriggeredEvent } from "./StationScript.js"
export { decodeStationScript, DEFAULT_RESEND, DEFAULT_STATION_SOURCE, readStationScript } from "./ScriptDecode.js"
export { EVENT_PLACEHOLDERS, REPLY_PLACEHOLDERS } from "./Templates.js"
export type { Answer, PlannedEvent, PlannedTrigger, ReceivedCommand } from "./CommandAnswers.js"
export { type EmitOptions, type EmittedEvent, makeStation, type Station, type StationOptions } from "./Station.js"
export type { StationStats } from "./StationStats.js"
// The MES: its input files, the run, and the report.
export { type ConfigRequest, type JobOrderInput, type MesInput, type MesInputFiles, readMesInput } from "./MesInput.js"
export { type MesOptions, type MesProgress, runMes } from "./Mes.js"
export { allCompleted, formatReport, type JobOutcome, type MesReport } from "./MesReport.js"
// Both: the job order states an island announces, and the errors.
export { followJobStates, isEndState, type JobStateSeen } from "./JobStates.js"
export * from "./Errors.js"
