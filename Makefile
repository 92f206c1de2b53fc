# uidgen: unique ID generators for PostgreSQL (PGXS build)

EXTENSION = uidgen
EXTVERSION = 0.3.0

MODULE_big = uidgen
OBJS = \
	src/sql/status.o \
	src/sql/uidgen.o \
	src/snowflake/snowflake.o \
	src/uuidv7/uuidv7.o \
	src/text/base32.o \
	src/text/numformat.o \
	src/text/snowflaketext.o \
	src/text/typeid.o \
	src/text/ulid.o \
	src/blocks/allocqueue.o \
	src/blocks/allocslots.o \
	src/blocks/allocseq.o \
	src/blocks/allocsql.o \
	src/blocks/allocworker.o \
	src/blocks/blockcache.o \
	src/blocks/blocks.o \
	src/blocks/cachetable.o \
	src/blocks/failover.o \
	src/blocks/period.o \
	src/blocks/gapless.o \
	src/blocks/outcome.o \
	src/blocks/seqrow.o \
	src/blocks/leasewait.o \
	src/replicas/citus.o \
	src/replicas/citusblocks.o \
	src/replicas/citusconn.o \
	src/replicas/copies.o \
	src/replicas/keeper.o \
	src/replicas/leaseworker.o \
	src/replicas/registry.o \
	src/replicas/upgrade.o \
	src/clock/clock.o \
	src/clock/identity.o \
	src/clock/layout.o \
	src/clock/lease.o \
	src/clock/statefile.o \
	src/clock/statefileio.o \
	src/clock/walmark.o \
	src/core/counters.o \
	src/core/settings.o \
	src/core/shmem.o \
	src/core/workers.o

# A test build (make UIDGEN_CRASH_POINTS=1, as scripts/test.sh builds) has
# crash points (src/core/crashpoint.h); a production build has no trace of them.
# (make clean removes its object whichever build made it)
EXTRA_CLEAN += src/core/crashpoint.o
ifdef UIDGEN_CRASH_POINTS
OBJS += src/core/crashpoint.o
PG_CPPFLAGS += -DUIDGEN_CRASH_POINTS
endif

# Install scripts (pgvector's pattern): the current version's, every
# update script, and those of 0.1.0 and 0.2.0, which
# test/t/120_extension_update.pl installs and updates.
DATA = sql/$(EXTENSION)--$(EXTVERSION).sql sql/$(EXTENSION)--0.1.0.sql sql/$(EXTENSION)--0.2.0.sql \
	$(wildcard sql/$(EXTENSION)--*--*.sql)

# pg_regress: the SQL surface, one file per concern (sql/ and expected/)
REGRESS = setup snowflake uuidv7 uuidv7_core textforms convert blocks blocks_sequence blocks_prefetch blocks_gapless blocks_format blocks_step blocks_period citus privileges blocks_cov
REGRESS_OPTS = --load-extension=$(EXTENSION)

# isolation specs (specs/ and expected/)
ISOLATION = snowflake_concurrent uuidv7_concurrent blocks_disjoint blocks_rollback \
	blocks_repeatable_read blocks_exhaustion blocks_key_share blocks_multixact \
	blocks_table_lock blocks_gapless_queue convert_concurrent blocks_cov_gapless_drop \
	blocks_cov_multixact alloc_recreated blocks_step_alter blocks_step_gapless \
	blocks_period_queue
ISOLATION_OPTS = --load-extension=$(EXTENSION)

PG_CPPFLAGS += -I$(srcdir)/src -I$(libpq_srcdir)
# the lease worker reaches the worker id registry with libpq (as dblink and
# postgres_fdw do)
SHLIB_LINK_INTERNAL = $(libpq)
PG_CFLAGS = -Wall -Wextra -Werror -Wno-unused-parameter

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# TAP tests (test/t/*.pl) start their own clusters, so they are not part of
# "make installcheck"; run them with "make tapcheck" as a non-root user.
PROVE_TESTS ?= test/t/*.pl
PROVE_FLAGS += -I test

.PHONY: tapcheck
tapcheck:
	@if [ "$$(id -u)" = 0 ]; then \
		echo "make tapcheck: do not run this as root: the TAP tests start their own" \
			"PostgreSQL servers, and initdb and postgres refuse to run as root." >&2; \
		echo "Run it as an unprivileged user from a copy of the checkout that user owns," \
			"e.g. as root: ./scripts/tap.sh (or ./scripts/test.sh for the whole suite)." >&2; \
		exit 1; \
	fi
	$(prove_installcheck)
