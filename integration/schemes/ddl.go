package schemes

import (
	"context"
	"database/sql"
	"fmt"
)

// The schemes' tables, verbatim from their projects' published scripts
// (Leaf's README, Tinyid's db.sql, UidGenerator's WORKER_NODE.sql), and
// the rows those scripts insert. The servers under test must accept
// them unchanged: that is the point of issue 12.
const (
	LeafDDL = "CREATE TABLE leaf_alloc (biz_tag varchar(128) NOT NULL DEFAULT '', max_id bigint(20) NOT NULL DEFAULT '1', " +
		"step int(11) NOT NULL, description varchar(256) DEFAULT NULL, update_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP " +
		"ON UPDATE CURRENT_TIMESTAMP, PRIMARY KEY (biz_tag)) ENGINE=InnoDB"
	LeafSeed = "INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES ('leaf-segment-test', 1, 2000, 'Test leaf Segment Mode Get Id')"
	// LeafTag and LeafStep are the seeded row's biz_tag and step.
	LeafTag  = "leaf-segment-test"
	LeafStep = 2000

	TinyidDDL = "CREATE TABLE tiny_id_info (id bigint(20) unsigned NOT NULL AUTO_INCREMENT, biz_type varchar(63) NOT NULL DEFAULT '', " +
		"begin_id bigint(20) NOT NULL DEFAULT '0', max_id bigint(20) NOT NULL DEFAULT '0', step int(11) DEFAULT '0', " +
		"delta int(11) NOT NULL DEFAULT '1', remainder int(11) NOT NULL DEFAULT '0', " +
		"create_time timestamp NOT NULL DEFAULT '2010-01-01 00:00:00', update_time timestamp NOT NULL DEFAULT '2010-01-01 00:00:00', " +
		"version bigint(20) NOT NULL DEFAULT '0', PRIMARY KEY (id), UNIQUE KEY uniq_biz_type (biz_type)) ENGINE=InnoDB AUTO_INCREMENT=1"
	TinyidSeed = "INSERT INTO tiny_id_info (id, biz_type, begin_id, max_id, step, delta, remainder, create_time, update_time, version) " +
		"VALUES (1, 'test', 1, 1, 100000, 1, 0, '2017-11-21 16:10:08', '2017-11-21 16:10:08', 1)"
	// TinyidBizType and TinyidStep are the seeded row's biz_type and step.
	TinyidBizType = "test"
	TinyidStep    = 100000

	UidGenDDL = "CREATE TABLE WORKER_NODE (ID BIGINT NOT NULL AUTO_INCREMENT COMMENT 'auto increment id', " +
		"HOST_NAME VARCHAR(64) NOT NULL COMMENT 'host name', PORT VARCHAR(64) NOT NULL COMMENT 'port', " +
		"TYPE INT NOT NULL COMMENT 'node type: ACTUAL or CONTAINER', LAUNCH_DATE DATE NOT NULL COMMENT 'launch date', " +
		"MODIFIED TIMESTAMP NOT NULL COMMENT 'modified time', CREATED TIMESTAMP NOT NULL COMMENT 'created time', " +
		"PRIMARY KEY(ID)) COMMENT='DB WorkerID Assigner for UID Generator',ENGINE = INNODB"

	// TicketDDL is Flickr's ticket table (the one integration/harness
	// creates as FlickrDDL).
	TicketDDL = "CREATE TABLE Tickets64 (id bigint(20) unsigned NOT NULL auto_increment, " +
		"stub char(1) NOT NULL default '', PRIMARY KEY (id), UNIQUE KEY stub (stub)) ENGINE=MyISAM"

	// SeqCached and SeqNoCache are the sequences the NextVal schemes use.
	SeqCached  = "s"
	SeqNoCache = "s_nocache"
)

// SequenceDDL is CREATE SEQUENCE as MariaDB's manual writes it; cache 0
// means NOCACHE.
func SequenceDDL(name string, cache int) string {
	c := "NOCACHE"
	if cache > 0 {
		c = fmt.Sprintf("CACHE %d", cache)
	}
	return fmt.Sprintf("CREATE SEQUENCE %s START WITH 1 INCREMENT BY 1 %s", name, c)
}

// SetupStatements returns the statements that create what the given
// schemes need, each table once (Leaf and LeafDynamic share leaf_alloc,
// as the two modes of one Leaf deployment do).
func SetupStatements(schemes ...Scheme) []string {
	var out []string
	done := map[string]bool{}
	add := func(key string, stmts ...string) {
		if !done[key] {
			done[key] = true
			out = append(out, stmts...)
		}
	}
	for _, s := range schemes {
		switch s {
		case Leaf, LeafDynamic, leafNoTx:
			add("leaf", LeafDDL, LeafSeed)
		case Tinyid, TinyidAutocommit:
			add("tinyid", TinyidDDL, TinyidSeed)
		case UidGen:
			add("uidgen", UidGenDDL)
		case NextVal:
			add("seq", SequenceDDL(SeqCached, 1000))
		case NextValNoCache:
			add("seqnc", SequenceDDL(SeqNoCache, 0))
		case Ticket:
			add("ticket", TicketDDL)
		}
	}
	return out
}

// Setup runs SetupStatements on the server and database of dsn, which
// must exist and be empty of these tables.
func Setup(ctx context.Context, dsn string, schemes ...Scheme) error {
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, q := range SetupStatements(schemes...) {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("setup: %s: %w", q, err)
		}
	}
	return nil
}
