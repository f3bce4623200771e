package model

var intKinds = map[string]IntKind{
	"tinyint": TinyInt, "smallint": SmallInt, "mediumint": MediumInt,
	"int": Int, "integer": Int, "bigint": BigInt,
}

// IntKindOf is the width of the integer type named name, ok false when
// name is no integer type.
func IntKindOf(name string) (k IntKind, ok bool) {
	k, ok = intKinds[name]
	return k, ok
}

// DefaultWidth is the display width MariaDB shows for an integer type
// declared without one.
func DefaultWidth(k IntKind, unsigned bool) int {
	w := map[IntKind]int{TinyInt: 4, SmallInt: 6, MediumInt: 9, Int: 11, BigInt: 20}[k]
	if unsigned && k != BigInt {
		w--
	}
	return w
}
