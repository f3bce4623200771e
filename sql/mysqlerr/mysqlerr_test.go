package mysqlerr

import "testing"

// TestState pins the SQLSTATE clients get with each code: the numbers
// MariaDB sends, which the differential test compares against. A change
// in go-mysql's table shows here first.
func TestState(t *testing.T) {
	want := map[uint16]string{
		167: "22003", 1007: "HY000", 1008: "HY000", 1043: "08S01", 1045: "28000", 1046: "3D000",
		1047: "08S01", 1048: "23000", 1049: "42000", 1050: "42S01", 1051: "42S02", 1054: "42S22",
		1062: "23000", 1063: "42000", 1064: "42000", 1065: "42000", 1072: "42000", 1075: "42000",
		1096: "HY000", 1105: "HY000", 1110: "42000", 1136: "21S01", 1146: "42S02", 1153: "08S01",
		1193: "HY000", 1231: "42000", 1232: "42000", 1235: "42000", 1238: "HY000", 1243: "HY000",
		1264: "22003", 1290: "HY000", 1364: "HY000", 1366: "22007", 1406: "22001",
		3159: "HY000", 4031: "HY000",
	}
	codes := []uint16{CodeAutoincRange, CodeDBCreateExists, CodeDBDropExists, CodeHandshake, CodeAccessDenied,
		CodeNoDB, CodeUnknownCommand, CodeBadNull, CodeBadDB, CodeTableExists, CodeBadTable, CodeBadField,
		CodeDupEntry, CodeWrongFieldSpec, CodeParse, CodeEmptyQuery, CodeKeyColumnMissing, CodeWrongAutoKey,
		CodeNoTablesUsed, CodeUnknown, CodeFieldSpecifiedTwice, CodeWrongValueCount, CodeNoSuchTable,
		CodePacketTooLarge, CodeUnknownSystemVar, CodeWrongValueForVar, CodeWrongTypeForVar,
		CodeNotSupported, CodeReadOnlyVar, CodeUnknownStmtHandler, CodeDataOutOfRange, CodeReadOnly,
		CodeNoDefault, CodeIncorrectValue, CodeDataTooLong, CodeSecureTransportRequired, CodeClientTimeout}
	if len(codes) != len(want) {
		t.Fatalf("%d codes, %d expected states", len(codes), len(want))
	}
	for _, c := range codes {
		s, ok := want[c]
		if !ok {
			t.Errorf("code %d: no expected state", c)
			continue
		}
		if got := State(c); got != s {
			t.Errorf("State(%d) = %s, want %s", c, got, s)
		}
	}
}

func TestMessages(t *testing.T) {
	for _, tc := range []struct {
		e    *Error
		want string
	}{
		{UnknownColumn("x", "field list"), "ERROR 1054 (42S22): Unknown column 'x' in 'field list'"},
		{NoSuchTable("d", "t"), "ERROR 1146 (42S02): Table 'd.t' doesn't exist"},
		{UnknownDB("d"), "ERROR 1049 (42000): Unknown database 'd'"},
		{NotSupported("x"), "ERROR 1235 (42000): This version of ticketd doesn't yet support 'x'"},
		{OutOfRange("id", 2), "ERROR 1264 (22003): Out of range value for column 'id' at row 2"},
		{AutoincExhausted("id", 1), "ERROR 167 (22003): Out of range value for column 'id' at row 1"},
		{NoDefault("id"), "ERROR 1364 (HY000): Field 'id' doesn't have a default value"},
		{BadNull("s"), "ERROR 1048 (23000): Column 's' cannot be null"},
		{UnknownSystemVar("v"), "ERROR 1193 (HY000): Unknown system variable 'v'"},
		{NoTablesUsed(), "ERROR 1096 (HY000): No tables used"},
		{Syntax("?", 1), "ERROR 1064 (42000): You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '?' at line 1"},
		{SyntaxBecause("why"), "ERROR 1064 (42000): You have an error in your SQL syntax; why"},
		{MalformedPacket(), "ERROR 1835 (08S01): Malformed communication packet."},
		{&Error{Code: CodeUnknown, Message: "m"}, "ERROR 1105 (HY000): m"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}
