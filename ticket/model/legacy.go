package model

// The older generation of the row tables' format, kept for the tables
// and log entries that have it. Its rules are the row engine's
// (ticket/rowengine/legacy*.go); here is only its name.

// CollLegacy is the folding of tables created by builds before command
// version 8: strings.ToLower of the value with trailing spaces removed,
// compared byte by byte. It is not MariaDB's: 'é' and 'E' differ, '_'
// sorts before the letters. Kept, unchanged, for the tables that have
// it; it is Collation's zero value, which the tables of those builds
// decode to.
const CollLegacy Collation = 0
