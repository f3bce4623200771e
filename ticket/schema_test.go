package ticket

import (
	"errors"
	"testing"

	"github.com/ticketd/ticketd/sql/mysqlerr"
	"github.com/ticketd/ticketd/ticket/model"
)

func flickrSpec() *model.TableSpec {
	return &model.TableSpec{DB: "flickr", Name: "Tickets64", Engine: "MyISAM", Comment: "ticketd:cache=100",
		Columns: []model.ColumnSpec{
			{Name: "id", Type: "bigint", Unsigned: true, Width: 20, NotNull: true, AutoInc: true},
			{Name: "stub", Type: "char", Width: 1, NotNull: true, HasDefault: true, Default: model.Value{Kind: model.ValString}},
		},
		Keys: []model.KeySpec{{Primary: true, Columns: []string{"id"}}, {Name: "stub", Unique: true, Columns: []string{"stub"}}},
	}
}

func TestNewTableDefFlickr(t *testing.T) {
	d, err := NewTableDef(flickrSpec())
	if err != nil {
		t.Fatal(err)
	}
	if d.IDKey != model.PrimaryKey || d.StubKey != "stub" || d.Cache != 100 || d.StubType != "char(1)" || !d.IDNotNull {
		t.Fatalf("def = %+v", d)
	}
	tb := &model.Table{Def: *d, AutoInc: 7}
	want := "CREATE TABLE `Tickets64` (\n" +
		"  `id` bigint(20) unsigned NOT NULL AUTO_INCREMENT,\n" +
		"  `stub` char(1) NOT NULL DEFAULT '',\n" +
		"  PRIMARY KEY (`id`),\n" +
		"  UNIQUE KEY `stub` (`stub`)\n" +
		") ENGINE=MyISAM AUTO_INCREMENT=7 DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci COMMENT='ticketd:cache=100'"
	if got := CreateStatement(tb); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestNewTableDefDefaultWidth(t *testing.T) {
	s := &model.TableSpec{Name: "seq", Columns: []model.ColumnSpec{{Name: "id", Type: "int", Unsigned: true, NotNull: true}}}
	d, err := NewTableDef(s)
	if err != nil {
		t.Fatal(err)
	}
	if d.IDType.SQL() != "int(10) unsigned" || d.Engine != "MyISAM" {
		t.Fatalf("def = %+v", d)
	}
	// A nullable integer alone holds NULLs: a row table (issue 32).
	s.Columns[0].NotNull = false
	if d, err = NewTableDef(s); err != nil || d.Rows == nil || d.Engine != "InnoDB" {
		t.Fatalf("nullable: def = %+v, %v", d, err)
	}
}

func TestNewTableDefRefused(t *testing.T) {
	for name, tc := range map[string]struct {
		edit func(*model.TableSpec)
		code uint16
	}{
		"auto stub":        {func(s *model.TableSpec) { s.Columns[1].AutoInc = true }, mysqlerr.CodeWrongFieldSpec},
		"unknown key col":  {func(s *model.TableSpec) { s.Keys[1].Columns = []string{"nope"} }, mysqlerr.CodeKeyColumnMissing},
		"auto without key": {func(s *model.TableSpec) { s.Keys = nil }, mysqlerr.CodeWrongAutoKey},
		// Two integer columns make a row table (rows.go), which has no
		// text column type.
		"two ints and text": {func(s *model.TableSpec) {
			s.Columns = append(s.Columns, model.ColumnSpec{Name: "n", Type: "int"}, model.ColumnSpec{Name: "t", Type: "text"})
		}, mysqlerr.CodeNotSupported},
		"other type": {func(s *model.TableSpec) { s.Columns[1].Type = "text" }, mysqlerr.CodeNotSupported},
	} {
		s := flickrSpec()
		tc.edit(s)
		_, err := NewTableDef(s)
		var e *model.Error
		if !errors.As(err, &e) || e.Code != tc.code {
			t.Errorf("%s: err = %v, want code %d", name, err, tc.code)
		}
	}
}

func TestCacheOption(t *testing.T) {
	for comment, want := range map[string]uint64{"ticketd:cache=1000": 1000, "x, TICKETD:CACHE=5": 5, "none": 0} {
		if n, _ := CacheOption(comment); n != want {
			t.Errorf("CacheOption(%q) = %d, want %d", comment, n, want)
		}
	}
	if _, ok := CacheOption("ticketd:cache=x"); ok {
		t.Error("a bad number was accepted")
	}
}
