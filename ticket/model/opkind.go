package model

// IsSeq reports whether op is a sequence command: numbers 20-29 are the
// sequences' range of the log format.
func (op Op) IsSeq() bool { return op >= OpCreateSeq && op <= 29 }
