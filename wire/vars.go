package wire

import (
	"sort"
)

// sysVar describes a system variable ticketd answers for. Values are
// int64, uint64 or string: the type decides the result column's type, and
// drivers care (HikariCP parses @@transaction_read_only as an integer).
type sysVar struct {
	value    any
	readOnly bool
	// session is false for global-only variables.
	session bool
}

// sysVars returns the variables ticketd knows, with their defaults. It is a
// function, not a package variable, so nothing shared can be mutated.
func sysVars(version string) map[string]sysVar {
	rw := func(v any) sysVar { return sysVar{value: v, session: true} }
	ro := func(v any) sysVar { return sysVar{value: v, readOnly: true, session: true} }
	return map[string]sysVar{
		"auto_increment_increment":       rw(int64(1)),
		"auto_increment_offset":          rw(int64(1)),
		"autocommit":                     rw(int64(1)),
		"character_set_client":           rw("utf8mb4"),
		"character_set_connection":       rw("utf8mb4"),
		"character_set_database":         rw("utf8mb4"),
		"character_set_filesystem":       rw("binary"),
		"character_set_results":          rw("utf8mb4"),
		"character_set_server":           rw("utf8mb4"),
		"character_set_system":           ro("utf8mb3"),
		"collation_connection":           rw("utf8mb4_general_ci"),
		"collation_database":             rw("utf8mb4_general_ci"),
		"collation_server":               rw("utf8mb4_general_ci"),
		"default_storage_engine":         rw("MyISAM"),
		"storage_engine":                 rw("MyISAM"),
		"error_count":                    ro(int64(0)),
		"foreign_key_checks":             rw(int64(1)),
		"have_query_cache":               ro("NO"),
		"hostname":                       ro("localhost"),
		"init_connect":                   rw(""),
		"interactive_timeout":            rw(int64(28800)),
		"license":                        ro("Apache-2.0"),
		"lower_case_table_names":         ro(int64(0)),
		"max_allowed_packet":             rw(int64(16777216)),
		"max_connections":                rw(int64(10000)),
		"max_execution_time":             rw(int64(0)),
		"net_buffer_length":              rw(int64(16384)),
		"net_read_timeout":               rw(int64(30)),
		"net_write_timeout":              rw(int64(60)),
		"performance_schema":             ro(int64(0)),
		"port":                           ro(int64(3306)),
		"protocol_version":               ro(int64(10)),
		"query_cache_size":               rw(int64(0)),
		"query_cache_type":               rw("OFF"),
		"read_only":                      rw(int64(0)),
		"server_id":                      rw(int64(1)),
		"session_track_schema":           rw("ON"),
		"session_track_state_change":     rw("OFF"),
		"session_track_system_variables": rw("autocommit,character_set_client,character_set_connection,character_set_results,time_zone"),
		"session_track_transaction_info": rw("OFF"),
		"sql_auto_is_null":               rw(int64(0)),
		"sql_mode":                       rw("STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION"),
		"sql_notes":                      rw(int64(1)),
		"sql_quote_show_create":          rw(int64(1)),
		"sql_safe_updates":               rw(int64(0)),
		"sql_select_limit":               rw(uint64(18446744073709551615)),
		"sql_warnings":                   rw(int64(0)),
		"system_time_zone":               ro("UTC"),
		"timestamp":                      rw("0"), // read and set by the session (rowengine.go)
		"time_zone":                      rw("SYSTEM"),
		"transaction_isolation":          rw("REPEATABLE-READ"),
		"tx_isolation":                   rw("REPEATABLE-READ"),
		"transaction_read_only":          rw(int64(0)),
		"tx_read_only":                   rw(int64(0)),
		"unique_checks":                  rw(int64(1)),
		"version":                        ro(version),
		"version_comment":                ro("ticketd"),
		"version_compile_machine":        ro("x86_64"),
		"version_compile_os":             ro("Linux"),
		"wait_timeout":                   rw(int64(28800)),
		"warning_count":                  ro(int64(0)),
		"identity":                       rw(uint64(0)),
		"last_insert_id":                 rw(uint64(0)),
		"names":                          rw("utf8mb4"),
		"net_retry_count":                rw(int64(10)),
		"group_concat_max_len":           rw(int64(1024)),
		"div_precision_increment":        rw(int64(4)),
		"time_format":                    ro("%H:%i:%s"),
		"lc_messages":                    rw("en_US"),
	}
}

// sortedVarNames lists variable names for SHOW VARIABLES.
func sortedVarNames(vars map[string]sysVar) []string {
	names := make([]string, 0, len(vars))
	for n := range vars {
		if n == "names" || n == "identity" || n == "last_insert_id" || n == "warning_count" || n == "error_count" {
			continue
		}
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
