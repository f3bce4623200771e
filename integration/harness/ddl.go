package harness

// FlickrDDL is Flickr's ticket table as its ticket servers create it,
// for table (qualified or not): a 64-bit auto_increment id and a
// one-character unique stub.
func FlickrDDL(table string) string {
	return "CREATE TABLE " + table + " (id bigint(20) unsigned NOT NULL auto_increment, " +
		"stub char(1) NOT NULL default '', PRIMARY KEY (id), UNIQUE KEY stub (stub)) ENGINE=MyISAM"
}
