package integration

import (
	"strings"
	"testing"
)

// This file reads MariaDB's regression tests (mysqltest's .test files) as
// mysqltest itself does, so that TestMariaDBRegression can run their SQL
// statements one by one. It does not parse SQL: it follows mysqltest's own
// structure (client/mysqltest.cc, read_line and get_command_type), which is
// line- and delimiter-based:
//
//   - at the start of a statement, a line beginning with '#' is a comment,
//     and a line beginning with "--" is one mysqltest command (or, if its
//     first word is no command, a comment) that ends at the end of the line;
//   - anything else runs to the current delimiter (';' until a `delimiter`
//     command changes it), outside '...', "..." and `...` quotes; a
//     statement that begins with `while` or `if` ends at its '{', and '}'
//     closes such a block;
//   - a statement whose first word is a mysqltest command is that command
//     (`let`, `eval`, `connection`, `source`, ...); any other is SQL sent
//     to the server as written.

// mtItem is one statement or command of a .test file.
type mtItem struct {
	Line  int    // 1-based line where it starts
	Cmd   string // mysqltest command (lower case); "" for SQL
	Text  string // SQL text, or the command's argument
	Depth int    // nesting in while/if blocks: >0 means mysqltest loops or branches over it
}

// mysqltestCommands are mysqltest's command names (get_command_type looks
// a statement's first word up in this list; "--" lines too).
var mysqltestCommands = map[string]bool{}

func init() {
	for _, c := range strings.Fields(`connection query connect sleep real_sleep inc dec source
		disconnect let echo expr while end system result require save_master_pos sync_with_master
		sync_slave_with_master error send reap dirty_close replace_result replace_column ping eval
		enable_query_log disable_query_log enable_result_log disable_result_log enable_connect_log
		disable_connect_log wait_for_slave_to_stop enable_warnings disable_warnings enable_info
		disable_info enable_session_track_info disable_session_track_info enable_metadata
		disable_metadata exec execw exec_in_background delimiter disable_abort_on_error
		enable_abort_on_error vertical_results horizontal_results query_vertical query_horizontal
		sorted_result partially_sorted_result lowercase_result start_timer end_timer character_set
		disable_ps_protocol enable_ps_protocol disable_ps2_protocol enable_ps2_protocol
		disable_view_protocol enable_view_protocol disable_cursor_protocol enable_cursor_protocol
		disable_service_connection enable_service_connection disable_non_blocking_api
		enable_non_blocking_api disable_reconnect enable_reconnect if disable_parsing
		enable_parsing replace_regex replace_numeric_round remove_file file_exists write_file
		copy_file perl die assert exit skip chmod append_file cat_file diff_files send_quit
		change_user mkdir rmdir list_files list_files_write_file list_files_append_file
		send_shutdown shutdown_server result_format move_file remove_files_wildcard
		copy_files_wildcard send_eval output reset_connection single_query
		enable_prepare_warnings disable_prepare_warnings disable_testcase enable_testcase
		query_get_value optimizer_trace disable_query_log`) {
		mysqltestCommands[c] = true
	}
}

// firstWord returns s's leading word (letters, digits, '_') in lower case
// and what follows it, trimmed.
func firstWord(s string) (word, rest string) {
	i := 0
	for i < len(s) && (isWordByte(s[i]) || s[i] == '-' && i > 0 && i+1 < len(s) && isWordByte(s[i+1])) {
		i++
	}
	return strings.ToLower(s[:i]), strings.TrimSpace(s[i:])
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// splitMysqltest splits a .test file into its statements and commands.
// The delimiter command is applied here (it changes how what follows is
// split) and also returned.
func splitMysqltest(src string) []mtItem {
	var (
		out   []mtItem
		delim = ";"
		depth = 0
		line  = 1
		i     = 0
	)
	advance := func(to int) {
		line += strings.Count(src[i:to], "\n")
		i = to
	}
	eol := func(from int) int {
		if j := strings.IndexByte(src[from:], '\n'); j >= 0 {
			return from + j
		}
		return len(src)
	}
	for {
		// Skip the whitespace before a statement.
		j := i
		for j < len(src) && strings.IndexByte(" \t\r\n", src[j]) >= 0 {
			j++
		}
		advance(j)
		if i >= len(src) {
			return out
		}
		start := line
		switch {
		case src[i] == '#':
			advance(eol(i))
			continue
		case strings.HasPrefix(src[i:], "--"):
			e := eol(i)
			body := strings.TrimSpace(src[i+2 : e])
			advance(e)
			word, rest := firstWord(body)
			if !mysqltestCommands[word] {
				continue // a comment
			}
			if word == "delimiter" {
				delim = rest
			}
			out = append(out, mtItem{Line: start, Cmd: word, Text: rest, Depth: depth})
			continue
		case src[i] == '}':
			if depth > 0 {
				depth--
			}
			advance(i + 1)
			continue
		case src[i] == '{':
			advance(i + 1)
			continue
		}
		// A statement: up to the delimiter outside quotes, or a while/if
		// command's '{'.
		var quote byte
		j = i
		block := false
		for ; j < len(src); j++ {
			c := src[j]
			if quote != 0 {
				if c == '\\' {
					j++
				} else if c == quote {
					quote = 0
				}
				continue
			}
			if c == '\'' || c == '"' || c == '`' {
				quote = c
				continue
			}
			if strings.HasPrefix(src[j:], delim) {
				break
			}
			if c == '{' {
				if w, _ := firstWord(src[i:j]); w == "while" || w == "if" {
					block = true
					break
				}
			}
		}
		text := strings.TrimSpace(src[i:min(j, len(src))])
		end := min(j+len(delim), len(src))
		if block {
			end = j + 1
		}
		advance(end)
		word, rest := firstWord(text)
		switch {
		case block:
			out = append(out, mtItem{Line: start, Cmd: word, Text: rest, Depth: depth})
			depth++
		case mysqltestCommands[word]:
			if word == "delimiter" {
				delim = rest
			}
			out = append(out, mtItem{Line: start, Cmd: word, Text: rest, Depth: depth})
		case text != "":
			out = append(out, mtItem{Line: start, Text: text, Depth: depth})
		}
	}
}

func TestSplitMysqltest(t *testing.T) {
	src := `# a comment; with a semicolon
--disable_warnings
drop table if exists t1;
--enable_warnings
-- error 1062
insert into t1 values ('a;b', "c;d",
  1);
--echo # text
--error ER_DUP_ENTRY
select 1 from dual; select 2;
-- a plain comment
let $1 = 10;
while ($1)
{
  eval insert into t1 values ($1);
  dec $1;
}
delimiter |;
create procedure p() begin select 1; select 2; end|
delimiter ;|
--delimiter //
select 3//
--delimiter ;
--query_vertical select 4
eval select 5;
`
	got := splitMysqltest(src)
	want := []mtItem{
		{Line: 2, Cmd: "disable_warnings"},
		{Line: 3, Text: "drop table if exists t1"},
		{Line: 4, Cmd: "enable_warnings"},
		{Line: 5, Cmd: "error", Text: "1062"},
		{Line: 6, Text: "insert into t1 values ('a;b', \"c;d\",\n  1)"},
		{Line: 8, Cmd: "echo", Text: "# text"},
		{Line: 9, Cmd: "error", Text: "ER_DUP_ENTRY"},
		{Line: 10, Text: "select 1 from dual"},
		{Line: 10, Text: "select 2"},
		{Line: 12, Cmd: "let", Text: "$1 = 10"},
		{Line: 13, Cmd: "while", Text: "($1)"},
		{Line: 15, Cmd: "eval", Text: "insert into t1 values ($1)", Depth: 1},
		{Line: 16, Cmd: "dec", Text: "$1", Depth: 1},
		{Line: 18, Cmd: "delimiter", Text: "|"},
		{Line: 19, Text: "create procedure p() begin select 1; select 2; end"},
		{Line: 20, Cmd: "delimiter", Text: ";"},
		{Line: 21, Cmd: "delimiter", Text: "//"},
		{Line: 22, Text: "select 3"},
		{Line: 23, Cmd: "delimiter", Text: ";"},
		{Line: 24, Cmd: "query_vertical", Text: "select 4"},
		{Line: 25, Cmd: "eval", Text: "select 5"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d items, want %d:\n%+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("item %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}
