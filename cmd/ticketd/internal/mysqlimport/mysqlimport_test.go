package mysqlimport

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func ptr(s string) *string { return &s }

// flickrRows is information_schema's view of Flickr's Tickets64 on
// MariaDB, under the given schema and table name.
func flickrRows(schema, name, idType string) ([]TableRow, []ColumnRow, []IndexRow) {
	kind := strings.SplitN(idType, "(", 2)[0]
	return []TableRow{{Schema: schema, Name: name, Engine: "MyISAM", AutoInc: 1}},
		[]ColumnRow{
			{Schema: schema, Name: name, Column: "id", DataType: kind, ColumnType: idType, Extra: "auto_increment"},
			{Schema: schema, Name: name, Column: "stub", DataType: "char", ColumnType: "char(1)", Default: ptr("''"), CharLen: 1},
		},
		[]IndexRow{
			{Schema: schema, Name: name, Index: "PRIMARY", Seq: 1, Column: "id"},
			{Schema: schema, Name: name, Index: "stub", Seq: 1, Column: "stub"},
		}
}

func TestClassifyFlickr(t *testing.T) {
	tables, cols, idx := flickrRows("flickr", "Tickets64", "bigint(20) unsigned")
	defs, rejects := Classify(tables, cols, idx, true)
	if len(defs) != 1 || len(rejects) != 0 {
		t.Fatalf("defs %v rejects %v", defs, rejects)
	}
	want := "CREATE TABLE IF NOT EXISTS `flickr`.`Tickets64` (`id` bigint(20) unsigned NOT NULL AUTO_INCREMENT, " +
		"`stub` char(1) NOT NULL DEFAULT '', PRIMARY KEY (`id`), UNIQUE KEY `stub` (`stub`)) ENGINE=MyISAM"
	if got := defs[0].CreateSQL(); got != want {
		t.Errorf("CreateSQL:\n got %s\nwant %s", got, want)
	}
	if defs[0].ID.Max() != ^uint64(0) {
		t.Errorf("max %d", defs[0].ID.Max())
	}
}

func TestClassifyRejects(t *testing.T) {
	var tables []TableRow
	var cols []ColumnRow
	var idx []IndexRow
	add := func(name string, extraCols []ColumnRow, dropIdx string, mutate func([]ColumnRow)) {
		tr, cr, ir := flickrRows("app", name, "int(10) unsigned")
		mutate(cr)
		for i := range extraCols {
			extraCols[i].Schema, extraCols[i].Name = "app", name
		}
		tables, cols = append(tables, tr...), append(append(cols, cr...), extraCols...)
		for _, r := range ir {
			if r.Index != dropIdx {
				idx = append(idx, r)
			}
		}
	}
	none := func([]ColumnRow) {}
	add("ok", nil, "", none)
	add("wide", []ColumnRow{{Column: "created", DataType: "datetime", ColumnType: "datetime"}}, "", none)
	add("nokey", nil, "stub", none)
	add("textstub", nil, "", func(c []ColumnRow) { c[1].DataType, c[1].ColumnType = "text", "text" })
	add("noauto", nil, "", func(c []ColumnRow) { c[0].Extra = "" })
	add("floatid", nil, "", func(c []ColumnRow) { c[0].DataType, c[0].ColumnType = "double", "double" })
	// Not mentioned at all: nothing about it looks like a ticket table.
	tables = append(tables, TableRow{Schema: "app", Name: "users"}, TableRow{Schema: "mysql", Name: "user"})
	cols = append(cols, ColumnRow{Schema: "app", Name: "users", Column: "name", DataType: "varchar"},
		ColumnRow{Schema: "mysql", Name: "user", Column: "id", DataType: "int", Extra: "auto_increment"})

	defs, rejects := Classify(tables, cols, idx, true)
	if len(defs) != 1 || defs[0].Name != "ok" {
		t.Errorf("ticket tables: %v", defs)
	}
	want := map[string]string{
		"wide":     "3 columns (id, stub, created)",
		"nokey":    "no unique key on stub column stub",
		"textstub": "stub column stub is text",
		"noauto":   "no AUTO_INCREMENT column",
		"floatid":  "AUTO_INCREMENT column id is double",
	}
	got := map[string]string{}
	for _, r := range rejects {
		got[r.Name] = r.Why
	}
	for name, why := range want {
		if !strings.Contains(got[name], why) {
			t.Errorf("%s: reason %q, want it to say %q", name, got[name], why)
		}
	}
	if len(got) != len(want) {
		t.Errorf("rejects %v, want exactly %v", got, want)
	}
}

func TestColumnDefault(t *testing.T) {
	for _, c := range []struct {
		in      *string
		mariadb bool
		want    *string
	}{
		{ptr("''"), true, ptr("")},
		{ptr("'it''s'"), true, ptr("it's")},
		{ptr("NULL"), true, nil},
		{nil, true, nil},
		{ptr(""), false, ptr("")},
		{ptr("'a'"), false, ptr("'a'")}, // MySQL: the value itself
	} {
		got := columnDefault(c.in, c.mariadb)
		if (got == nil) != (c.want == nil) || (got != nil && *got != *c.want) {
			t.Errorf("columnDefault(%v, %v) = %v, want %v", deref(c.in), c.mariadb, deref(got), deref(c.want))
		}
	}
}

func deref(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func TestQuoteIdent(t *testing.T) {
	k := Key{"we`ird", "t`"}
	if got := k.Quoted(); got != "`we``ird`.`t```" {
		t.Errorf("Quoted = %s", got)
	}
}

func TestHighest(t *testing.T) {
	for _, c := range []struct {
		c    Counter
		want uint64
	}{
		{Counter{AutoInc: 26, MaxID: 24}, 25}, // InnoDB with increment 2: AUTO_INCREMENT is the next odd/even value
		{Counter{AutoInc: 25, MaxID: 24}, 24}, // MyISAM: max + 1
		{Counter{AutoInc: 10, MaxID: 99}, 99}, // stale AUTO_INCREMENT, or an explicit id
		{Counter{AutoInc: 1, MaxID: 0}, 0},    // empty
		{Counter{AutoInc: 0, MaxID: 7}, 7},    // AUTO_INCREMENT unknown
	} {
		if got := c.c.Highest(); got != c.want {
			t.Errorf("%+v: Highest %d, want %d", c.c, got, c.want)
		}
	}
}

// source builds a Source with one table and the given counter.
func source(label string, idType string, c Counter) *Source {
	tables, cols, idx := flickrRows("flickr", "Tickets", idType)
	defs, _ := Classify(tables, cols, idx, true)
	return &Source{Label: label, Increment: 2, Offset: 1, ReadOnly: true, Tables: defs,
		Counters: map[Key]Counter{{"flickr", "Tickets"}: c}}
}

func TestBuild(t *testing.T) {
	s1 := source("s1", "bigint(20) unsigned", Counter{AutoInc: 1001, MaxID: 999})
	s2 := source("s2", "bigint(20) unsigned", Counter{AutoInc: 1500, MaxID: 1498})
	s2.Offset, s2.ReadOnly = 2, false
	p := Build([]*Source{s1, s2}, nil, 0)
	if err := p.Err(); err != nil {
		t.Fatal(err)
	}
	if tp := p.Tables[0]; tp.Highest != 1499 || tp.Start != 1500 {
		t.Errorf("highest %d start %d, want 1499 and 1500", tp.Highest, tp.Start)
	}
	if nro := p.NotReadOnly(); len(nro) != 1 || nro[0].Label != "s2" {
		t.Errorf("not read-only: %v", nro)
	}
	if p := Build([]*Source{s1, s2}, nil, 100); p.Tables[0].Start != 1600 {
		t.Errorf("margin 100: start %d, want 1600", p.Tables[0].Start)
	}
	var out bytes.Buffer
	p.Write(&out, false)
	for _, want := range []string{"dry run", "WARNING: s2", "ALTER TABLE `flickr`.`Tickets` AUTO_INCREMENT = 1500;",
		"SET GLOBAL auto_increment_increment = 1"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("plan lacks %q:\n%s", want, out.String())
		}
	}
}

func TestBuildTypeMax(t *testing.T) {
	// An INT UNSIGNED counter that handed out its last id: ticketd could
	// only continue past the type's maximum.
	p := Build([]*Source{source("s1", "int(10) unsigned", Counter{AutoInc: 4294967295, MaxID: 4294967295})}, nil, 0)
	if err := p.Err(); !errors.Is(err, ErrPlan) || !strings.Contains(err.Error(), "maximum 4294967295") {
		t.Errorf("err %v, want the type's maximum", err)
	}
	// The margin alone can push it over.
	p = Build([]*Source{source("s1", "int(10)", Counter{AutoInc: 2147483000})}, nil, 1000)
	if p.Err() == nil {
		t.Errorf("signed int at 2147483000 + 1000 accepted")
	}
	// Wrapping around uint64 is an error, not a small start.
	p = Build([]*Source{source("s1", "bigint(20) unsigned", Counter{MaxID: ^uint64(0) - 5})}, nil, 10)
	if p.Err() == nil || p.Tables[0].Start != 0 {
		t.Errorf("start %d err %v, want an error", p.Tables[0].Start, p.Err())
	}
}

func TestBuildTarget(t *testing.T) {
	s := source("s1", "bigint(20) unsigned", Counter{AutoInc: 500, MaxID: 499})
	k := Key{"flickr", "Tickets"}
	ahead := &Target{Increment: 2, Offset: 1, Tables: map[Key]TargetTable{k: {AutoInc: 9000, IDType: "bigint(20) unsigned", Max: ^uint64(0)}}}
	p := Build([]*Source{s}, ahead, 0)
	if p.Err() != nil || !strings.Contains(strings.Join(p.Tables[0].Notes, " "), "its counter stays") {
		t.Errorf("err %v notes %v", p.Err(), p.Tables[0].Notes)
	}
	var out bytes.Buffer
	p.Write(&out, true)
	if !strings.Contains(out.String(), "auto_increment_increment=2") || !strings.Contains(out.String(), "SET GLOBAL auto_increment_offset = 1") {
		t.Errorf("plan does not tell to reset ticketd's 2/1 globals:\n%s", out.String())
	}
	small := &Target{Tables: map[Key]TargetTable{k: {AutoInc: 1, IDType: "tinyint(4)", Max: typeMax("tinyint(4)")}}}
	if p := Build([]*Source{s}, small, 0); p.Err() == nil {
		t.Errorf("a tinyint table in ticketd accepted counter 500")
	}
}

func TestBuildDisagree(t *testing.T) {
	s1 := source("s1", "bigint(20) unsigned", Counter{AutoInc: 5})
	s2 := source("s2", "int(10) unsigned", Counter{AutoInc: 6})
	if p := Build([]*Source{s1, s2}, nil, 0); p.Err() == nil || !strings.Contains(p.Err().Error(), "disagree") {
		t.Errorf("err %v, want the sources' disagreement", p.Err())
	}
	// A ticket table on s1 that is not one on s2: s2's counter was not read.
	s3 := &Source{Label: "s2", Rejects: []Reject{{Key: Key{"flickr", "Tickets"}, Why: "3 columns"}}}
	if p := Build([]*Source{s1, s3}, nil, 0); p.Err() == nil || !strings.Contains(p.Err().Error(), "not a ticket table on s2") {
		t.Errorf("err %v", p.Err())
	}
}

func TestTypeMax(t *testing.T) {
	for typ, want := range map[string]uint64{
		"bigint(20) unsigned": ^uint64(0), "bigint": 1<<63 - 1, "int(10) unsigned": 1<<32 - 1,
		"int(11)": 1<<31 - 1, "mediumint unsigned": 1<<24 - 1, "char(1)": 0,
	} {
		if got := typeMax(typ); got != want {
			t.Errorf("typeMax(%q) = %d, want %d", typ, got, want)
		}
	}
}
