# ticketd: `make run` starts a single node, `make test` runs every test.
GO        ?= go
BIN       ?= bin/ticketd
PKGS_UNIT := ./ticket/... ./sql/... ./raftstore/... ./wire/... ./cmd/...
SOAK_DURATION  ?= 10m
BENCH_DURATION ?= 5s

.PHONY: all build run test test-unit test-integration vet fmt-check soak soak-schemes bench bench-readme bench-schemes bench-rows bench-restart bench-compare clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/ticketd

run: build
	./$(BIN)

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

test-unit:
	$(GO) test -race -count=1 $(PKGS_UNIT)
	# Allocation tests, built without the race detector (it allocates).
	$(GO) test -count=1 -run 'Alloc' ./sql/... ./wire/... ./cmd/ticketd/internal/metrics/

test-integration:
	$(GO) test -count=1 -timeout 8m ./integration/...

# A first run is mostly compiling (issue 34): go vet builds every package
# the integration tests need, and the race build of the unit tests, the
# largest step, compiles at the lowest priority while the integration tests
# run, which mostly wait on their processes; the unit tests then run from
# the build cache. (Compiling both at once at the same priority gained
# nothing on 2 cores: the builds are CPU-bound.)
test: fmt-check vet
	@nice -n 19 sh -c "$(GO) test -race -count=1 -run '^$$' $(PKGS_UNIT) && $(GO) test -count=1 -run '^$$' ./sql/... ./wire/... ./cmd/ticketd/internal/metrics/" >/dev/null 2>&1 & \
	  $(MAKE) --no-print-directory test-integration; status=$$?; wait; exit $$status
	$(MAKE) --no-print-directory test-unit

# One soak per Raft log store (issue 13), each for SOAK_DURATION, then
# one per table scope in SOAK_SCOPES (node: a node-scoped table, DESIGN
# §4c; SOAK_SCOPES= skips it); extra server flags in SOAK_ARGS (e.g.
# SOAK_ARGS="--cache 100").
SOAK_LOG_STORES ?= wal bolt
SOAK_SCOPES     ?= node
SOAK_ARGS       ?=
# Server flags of the Redis soak (TestSoakRedis) beyond SOAK_ARGS: key
# reservation, so that the leader's key blocks meet every fault.
SOAK_REDIS_ARGS ?= --redis-cache 100
soak:
	set -e; for store in $(SOAK_LOG_STORES); do \
	  echo "== soak, --raft-log $$store $(SOAK_ARGS)"; \
	  TICKETD_SOAK_DURATION=$(SOAK_DURATION) TICKETD_SOAK_ARGS="--raft-log $$store $(SOAK_ARGS)" \
	    $(GO) test -tags soak -count=1 -timeout 0 -run '^TestSoak$$' -v ./integration/faults/; \
	done; \
	for scope in $(SOAK_SCOPES); do \
	  echo "== soak, $$scope-scoped table $(SOAK_ARGS)"; \
	  TICKETD_SOAK_DURATION=$(SOAK_DURATION) TICKETD_SOAK_SCOPE=$$scope TICKETD_SOAK_ARGS="$(SOAK_ARGS)" \
	    $(GO) test -tags soak -count=1 -timeout 0 -run '^TestSoak$$' -v ./integration/faults/; \
	done; \
	echo "== soak, snowflake worker-id leases"; \
	TICKETD_SOAK_DURATION=$(SOAK_DURATION) $(GO) test -tags soak -count=1 -timeout 0 -run '^TestSoakSnowflake$$' -v ./integration/faults/; \
	echo "== soak, Redis INCR $(SOAK_REDIS_ARGS) $(SOAK_ARGS)"; \
	TICKETD_SOAK_DURATION=$(SOAK_DURATION) TICKETD_SOAK_ARGS="$(SOAK_REDIS_ARGS) $(SOAK_ARGS)" \
	  $(GO) test -tags soak -count=1 -timeout 0 -run '^TestSoakRedis$$' -v ./integration/faults/

# Measurements, not tests: sysbench (apt-get install sysbench) with
# ../shared/bench/ticket.lua if installed, else integration/ticketload. The
# tables also go to BENCH_OUT; make bench-readme puts them into
# integration/BENCHMARKS.md. TestBenchRedis needs redis-benchmark and
# redis-server (apt-get install redis-tools redis-server).
BENCH_OUT ?= bench-results.md
bench:
	@command -v sysbench >/dev/null || echo "sysbench not found (apt-get install sysbench): measuring with integration/ticketload instead"
	rm -f $(BENCH_OUT)
	TICKETD_BENCH_OUT=$(CURDIR)/$(BENCH_OUT) TICKETD_BENCH_DURATION=$(BENCH_DURATION) $(GO) test -tags bench -count=1 -timeout 30m -run '^TestBench(Schemes|Snowflake|Redis)?$$' -v ./integration/ | grep -v '^=== \|^--- \|^\s*bench_test.go'
	$(GO) test -run XXX -bench . -benchmem ./ticket/... ./sql/... ./raftstore/... ./wire/...
	@echo "tables saved in $(BENCH_OUT); make bench-readme copies them into $(BENCH_DOC)"

# The benchmark tables next to the benchmark code, between BENCH_DOC's
# bench markers, from the last make bench.
BENCH_DOC ?= integration/BENCHMARKS.md
bench-readme:
	@test -s $(BENCH_OUT) || { echo "no $(BENCH_OUT): run make bench first"; exit 1; }
	@grep -q '<!-- bench:start -->' $(BENCH_DOC) || { echo "$(BENCH_DOC) has no <!-- bench:start --> marker"; exit 1; }
	awk -v f=$(BENCH_OUT) '/<!-- bench:start -->/ { print; while ((getline l < f) > 0) print l; skip = 1; next } /<!-- bench:end -->/ { skip = 0 } !skip' $(BENCH_DOC) > $(BENCH_DOC).tmp
	mv $(BENCH_DOC).tmp $(BENCH_DOC)

# Row tables at scale (issue 22): WORKER_NODE filled through the MySQL
# protocol to BENCH_ROWS rows on one node and on MariaDB InnoDB, same run.
BENCH_ROWS ?= 1000000
bench-rows:
	TICKETD_BENCH_ROWS=$(BENCH_ROWS) TICKETD_BENCH_OUT=$(CURDIR)/$(BENCH_OUT) $(GO) test -tags bench -count=1 -timeout 60m -run '^TestBenchRow(s|Writes)$$' -v ./integration/ | grep -v '^=== \|^--- '

# Restart to ready at BENCH_ROWS rows after SIGTERM and kill -9; with
# BENCH_BEFORE=path/to/an/older/ticketd, both restart the same data
# directory in turn (before and after, same run). Then three nodes at
# BENCH_CLUSTER_ROWS: a follower that missed the fill catches up by
# snapshot, and the leader is killed mid-load.
BENCH_CLUSTER_ROWS ?= 100000
BENCH_BEFORE ?=
bench-restart:
	TICKETD_BENCH_ROWS=$(BENCH_ROWS) TICKETD_BENCH_CLUSTER_ROWS=$(BENCH_CLUSTER_ROWS) TICKETD_BENCH_BEFORE=$(BENCH_BEFORE) TICKETD_BENCH_OUT=$(CURDIR)/$(BENCH_OUT) $(GO) test -tags bench -count=1 -timeout 30m -run '^TestBench(Restart|RowsCluster)$$' -v ./integration/ | grep -v '^=== \|^--- '

# Before/after pairs (issue 33): make bench's ticket and row (Leaf and
# Tinyid) figures of the ticketd at BENCH_BEFORE_COMMIT, built from git
# history, and of this checkout, alternated (old, new, old, new, ...)
# BENCH_PAIRS times in one run through the harness's TICKETD_BIN; prints
# each pair's ratio and their median and range (integration/benchcompare,
# whose flags choose the targets).
BENCH_BEFORE_COMMIT ?= fd4302c
BENCH_PAIRS         ?= 3
bench-compare:
	$(GO) run ./integration/benchcompare -before $(BENCH_BEFORE_COMMIT) -pairs $(BENCH_PAIRS) -duration $(BENCH_DURATION)

# The ID schemes alone (Leaf, Tinyid, NEXTVAL; also part of make bench).
bench-schemes:
	TICKETD_BENCH_DURATION=$(BENCH_DURATION) $(GO) test -tags bench -count=1 -timeout 30m -run '^TestBenchSchemes$$' -v ./integration/ | grep -v '^=== \|^--- '

# The ID schemes' fault test, looped for SOAK_DURATION.
soak-schemes:
	TICKETD_SOAK_DURATION=$(SOAK_DURATION) $(GO) test -tags soak -count=1 -timeout 0 -run '^TestSoakSchemes$$' -v ./integration/faults/

clean:
	rm -rf bin ticketd-data

# Fuzzing (issue 5): each target for FUZZTIME (go test -fuzztime syntax:
# 100000x, 30s, 2m). CI runs it briefly; run it longer by hand, e.g.
# make fuzz FUZZTIME=2000000x. Failing inputs land in */testdata/fuzz/.
# Counts, not durations: Go 1.26's fuzz coordinator can report a bare
# "context deadline exceeded" failure, with no failing input, when a
# duration runs out while a worker is busy (golang/go#75804, fixed in
# Go 1.27; seen in a CI-like run of FuzzTypedValues at 5s).
FUZZTIME ?= 100000x
.PHONY: fuzz compat
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./sql
	$(GO) test -run '^$$' -fuzz '^FuzzPackets$$' -fuzztime $(FUZZTIME) ./wire
	$(GO) test -run '^$$' -fuzz '^FuzzTypedValues$$' -fuzztime $(FUZZTIME) ./ticket
	$(GO) test -run '^$$' -fuzz '^FuzzHandshakeParse$$' -fuzztime $(FUZZTIME) ./wire/mysqlconn
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeBatch$$' -fuzztime $(FUZZTIME) ./raftstore/logformat
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeStored$$' -fuzztime $(FUZZTIME) ./raftstore/logformat
	$(GO) test -run '^$$' -fuzz '^FuzzForwardFrames$$' -fuzztime $(FUZZTIME) ./raftstore

# Real MySQL clients against a fresh ticketd, one PASS/FAIL line each.
# Installs nothing: .ci/run installs the Debian packages and npm modules.
compat: build
	./integration/compat/run.sh ./$(BIN)
