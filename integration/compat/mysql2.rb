# Ruby mysql2 (libmariadb): query and last_id, server-side prepared
# statements, ping, a wrong password.
begin
  require 'mysql2'
rescue LoadError
  puts 'skip: the mysql2 gem is not installed'
  exit 0
end

def fail(msg)
  warn "FAIL: #{msg}"
  exit 1
end

host, port, user, pass, db, table = %w[HOST PORT USER PASSWORD DB TABLE].map { |k| ENV.fetch("TICKETD_#{k}") }
puts "version: ruby #{RUBY_VERSION} mysql2 #{Mysql2::VERSION}"
c = Mysql2::Client.new(host: host, port: port.to_i, username: user, password: pass)
c.query("CREATE DATABASE IF NOT EXISTS #{db}")
c.select_db(db)
c.query("CREATE TABLE IF NOT EXISTS #{table} (id bigint(20) unsigned NOT NULL auto_increment, " \
        "stub char(1) NOT NULL default '', PRIMARY KEY (id), UNIQUE KEY stub (stub)) ENGINE=MyISAM")
prev = 0
check = lambda do |what, id, lid|
  fail("#{what}: driver insert id #{id}, LAST_INSERT_ID() #{lid}") unless id == lid
  fail("#{what}: id #{id} not above #{prev}") unless id > prev
  prev = id
end
2.times do
  c.query("REPLACE INTO #{table} (stub) VALUES ('a')")
  id = c.last_id
  check.call('query', id, c.query('SELECT LAST_INSERT_ID() AS id').first['id'])
end
st = c.prepare("REPLACE INTO #{table} (stub) VALUES (?)")
2.times do
  st.execute('a')
  id = st.last_id
  check.call('prepared', id, c.query('SELECT LAST_INSERT_ID() AS id').first['id'])
end
row = c.prepare("SELECT id FROM #{table} WHERE stub = ?").execute('a').first
fail("row a #{row}") unless row['id'] == prev
fail('ping') unless c.ping
c.close
begin
  Mysql2::Client.new(host: host, port: port.to_i, username: user, password: 'wrong')
  fail('wrong password accepted')
rescue Mysql2::Error => e
  fail("wrong password: #{e.error_number} #{e.message}") unless e.error_number == 1045
end
puts 'ok'
