import { journalIndexedFamily } from "./JournalIndexes.js"

/** For `MICRODCS_EXTENSIONS=@microdcs/journal`: `microdcs-admin index check|rebuild` walk the journal's figures too. */
export const indexedFamilies = [journalIndexedFamily]
