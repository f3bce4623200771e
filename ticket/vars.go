package ticket

// Names of the replicated global variables.
const (
	VarIncrement = "auto_increment_increment"
	VarOffset    = "auto_increment_offset"
)
