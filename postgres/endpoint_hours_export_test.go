package postgres

// DeleteOldHoursSQL is DeleteOldEndpointHours's statement.
const DeleteOldHoursSQL = deleteOldHoursSQL
