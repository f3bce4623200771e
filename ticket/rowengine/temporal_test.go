package rowengine

import "testing"

// TestReadTime: the forms of a date or datetime string MariaDB 10.11
// read when inserted into DATE and DATETIME columns (each measured on the
// server: what it stored, or that it answered 1292), and the ones ticketd
// leaves to a 1235.
func TestReadTime(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // "invalid", "unsure" or the datetime
	}{
		{"2000-1-1", "2000-01-01 00:00:00"},
		{"2024-1-5 3:4:5", "2024-01-05 03:04:05"},
		{"24-1-5", "2024-01-05 00:00:00"},
		{"99-12-31", "1999-12-31 00:00:00"},
		{"70-01-01", "1970-01-01 00:00:00"},
		{"69-12-31", "2069-12-31 00:00:00"},
		{"2024/01/05", "2024-01-05 00:00:00"},
		{"2024.1.5", "2024-01-05 00:00:00"},
		{"2024@1@5 3@4@5", "2024-01-05 03:04:05"},
		{"2024-01-05T03:04:05", "2024-01-05 03:04:05"},
		{"20240105", "2024-01-05 00:00:00"},
		{"240105", "2024-01-05 00:00:00"},
		{"20240105030405", "2024-01-05 03:04:05"},
		{"240105030405", "2024-01-05 03:04:05"},
		{"2024-01-05 03:04", "2024-01-05 03:04:00"},
		{"2024-01-05 03", "2024-01-05 03:00:00"},
		{"2024-01-05 3:4:5.5", "2024-01-05 03:04:05"},
		{" 2024-1-5", "2024-01-05 00:00:00"},
		{"2024-01-5  03:04:05", "2024-01-05 03:04:05"},
		{"2024-1-05 03:04:05 ", "2024-01-05 03:04:05"},
		{"2024-1-5x", "cut"},
		{"2024--01--05", "invalid"},
		{"202401", "invalid"},
		{"2024-13-01", "invalid"},
		{"2024-02-30", "invalid"},
		{"2024-01-05 24:00:00", "invalid"},
		{"2024-01-05 23:60:00", "invalid"},
		{"abc", "invalid"},
		{"1-1-1", "unsure"},      // MariaDB: 0001-01-01
		{"024-01-05", "unsure"},  // 0024-01-05
		{"2024010", "unsure"},    // 1292
		{"2024-00-05", "unsure"}, // a zero in the date
		{"2024-01-05 03:04:05.1234567", "unsure"},
		{"2024-01-05 03.04", "unsure"},
		{"2.5", "invalid"},
		{"2024-01", "invalid"},
	} {
		tm, r := readTime(c.in)
		got := tm.Format("2006-01-02 15:04:05")
		switch r {
		case timeInvalid:
			got = "invalid"
		case timeUnsure:
			got = "unsure"
		case timeCut:
			got = "cut"
		}
		if got != c.want {
			t.Errorf("readTime(%q) = %s, want %s", c.in, got, c.want)
		}
	}
	for _, c := range []struct {
		in   uint64
		want string
	}{
		{20240105, "2024-01-05 00:00:00"}, {240105, "2024-01-05 00:00:00"},
		{20240105030405, "2024-01-05 03:04:05"}, {240105030405, "2024-01-05 03:04:05"},
		{101, "2000-01-01 00:00:00"}, {691231, "2069-12-31 00:00:00"}, {700101, "1970-01-01 00:00:00"},
		{99991231, "9999-12-31 00:00:00"}, {1000000, "invalid"}, {2024010503, "invalid"}, {100, "invalid"}, {0, "unsure"},
	} {
		tm, r := numberTime(c.in)
		got := tm.Format("2006-01-02 15:04:05")
		switch r {
		case timeInvalid:
			got = "invalid"
		case timeUnsure:
			got = "unsure"
		}
		if got != c.want {
			t.Errorf("numberTime(%d) = %s, want %s", c.in, got, c.want)
		}
	}
}
