/*-------------------------------------------------------------------------
 *
 * settings.c
 *	  Every uidgen.* setting: defined, and checked, here alone.
 *
 * Every setting that shapes a snowflake ID (worker id, epoch, layout) is
 * PGC_POSTMASTER: changing one while IDs are being generated could repeat
 * or reorder IDs.  So are the worker id registry and the lease length
 * (clock/lease.c), which stand in for uidgen.worker_id, and the sizes of
 * the block allocator's and the seq_next() cache's shared memory.
 * uidgen.max_clock_drift only bounds how far ahead of real time IDs may run,
 * so it can be changed with a reload, as can the block sequences' timeouts
 * and skip.  A test build (UIDGEN_CRASH_POINTS) also has uidgen.crash_point
 * and uidgen.crash_action (core/crashpoint.c).
 *
 * This module includes no other of uidgen's: every other module may read
 * the variables it defines, and none of them defines a setting.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "miscadmin.h"
#include "utils/datetime.h"
#include "utils/guc.h"
#include "utils/guc_tables.h"
#include "utils/timestamp.h"
#include "utils/varlena.h"

#include "core/settings.h"

/*
 * The three differences between majors that only the settings meet, kept
 * here rather than in core/compat.h so that this module includes no other.
 */
/* 16 added DecodeDateTime()'s error-detail argument. */
#if PG_VERSION_NUM >= 160000
#define UIDGEN_DECODE_DATETIME(f, t, n, dt, tm, fs, tz) \
	DecodeDateTime(f, t, n, dt, tm, fs, tz, &(DateTimeErrorExtra) {0})
#else
#define UIDGEN_DECODE_DATETIME(f, t, n, dt, tm, fs, tz) \
	DecodeDateTime(f, t, n, dt, tm, fs, tz)
#endif

/* 16 frees a setting's "extra" with guc_free(): allocate it with guc_malloc(). */
#if PG_VERSION_NUM >= 160000
#define UIDGEN_GUC_MALLOC(size) guc_malloc(LOG, size)
#else
#define UIDGEN_GUC_MALLOC(size) malloc(size)
#endif

/* 16 returns the number of settings from get_guc_variables() itself. */
#if PG_VERSION_NUM >= 160000
#define UIDGEN_GUC_VARIABLES(n) get_guc_variables(n)
#else
#define UIDGEN_GUC_VARIABLES(n) (*(n) = GetNumConfigOptions(), get_guc_variables())
#endif

#define DEFAULT_EPOCH "2024-01-01 00:00:00+00"

UidgenSettings uidgen_settings;
int			uidgen_max_clock_drift = 1000;
char	   *uidgen_worker_id_registry = NULL;
int			uidgen_worker_lease_ms = 30000;
bool		uidgen_registry_on = false;
bool		uidgen_citus_preloaded = false;
int			uidgen_block_timeout = 10000;
int			uidgen_citus_block_lease = 10000;
int			uidgen_block_databases = 4;
int			uidgen_allocator_idle_timeout = 60;
int			uidgen_block_cache_entries = 128;
int			uidgen_promotion_skip = 1000000;

static char *epoch_string = NULL;

/* Parse a timestamptz without throwing; false if it is not one. */
static bool
parse_epoch(const char *str, int64 *epoch_ms)
{
	char		workbuf[MAXDATELEN + MAXDATEFIELDS];
	char	   *field[MAXDATEFIELDS];
	int			ftype[MAXDATEFIELDS];
	int			nf;
	int			dtype;
	int			tz;
	struct pg_tm tm;
	fsec_t		fsec;
	Timestamp	ts;

	if (ParseDateTime(str, workbuf, sizeof(workbuf), field, ftype,
					  MAXDATEFIELDS, &nf) != 0 ||
		UIDGEN_DECODE_DATETIME(field, ftype, nf, &dtype, &tm, &fsec, &tz) != 0 ||
		dtype != DTK_DATE ||
		tm2timestamp(&tm, fsec, &tz, &ts) != 0)
		return false;
	*epoch_ms = (ts + (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY) / 1000;
	return true;
}

/* GUC check hook for uidgen.epoch: a timestamptz not before 1970. */
static bool
check_epoch(char **newval, void **extra, GucSource source)
{
	int64		ms;

	if (!parse_epoch(*newval, &ms))
	{
		GUC_check_errdetail("\"%s\" is not a valid timestamp with time zone.", *newval);
		return false;
	}
	if (ms < 0)
	{
		GUC_check_errdetail("The epoch must not be before 1970-01-01 00:00:00+00.");
		return false;
	}
	*extra = UIDGEN_GUC_MALLOC(sizeof(int64));
	if (*extra == NULL)
		return false;
	*(int64 *) *extra = ms;
	return true;
}

/* GUC assign hook for uidgen.epoch: keep the parsed value. */
static void
assign_epoch(const char *newval, void *extra)
{
	uidgen_settings.epoch_ms = *(int64 *) extra;
}

/* The drift bound in clock ticks. */
uint64
uidgen_drift_ticks(void)
{
	return UIDGEN_MS_TO_TICKS(uidgen_max_clock_drift);
}

/*
 * PostgreSQL only warns about an invalid value of a library's setting in
 * postgresql.conf and falls back to the default.  For the settings that
 * shape IDs that could repeat another server's IDs (a mistyped worker id
 * becomes 0), so refuse to start instead.  "raw" is the configured text.
 */
static void
check_configured(const char *name, const char *raw, int64 in_force)
{
	int			ival;
	int64		value;
	bool		parsed;

	if (raw == NULL)
		return;
	if (strcmp(name, "uidgen.epoch") == 0)
		parsed = parse_epoch(raw, &value) && value >= 0;
	else
	{
		parsed = parse_int(raw, &ival, 0, NULL);
		value = ival;
	}
	if (!parsed || value != in_force)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for parameter \"%s\": \"%s\"", name, raw),
				 errdetail("uidgen does not start with a default in place of a setting that shapes IDs."),
				 errhint("Correct the value in the configuration; the log above says why it was rejected.")));
}

/* The text a setting has in the configuration before it is defined, or NULL. */
static char *
configured(const char *name)
{
	const char *raw = GetConfigOption(name, true, false);

	return raw ? pstrdup(raw) : NULL;
}

/* Refuse a layout that cannot hold a timestamp or the worker id. */
static void
check_layout(void)
{
	const UidgenSettings *s = &uidgen_settings;

	if (s->worker_bits + s->sequence_bits > UIDGEN_MAX_LAYOUT_BITS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("uidgen.worker_bits + uidgen.sequence_bits must not exceed %d",
						UIDGEN_MAX_LAYOUT_BITS),
				 errdetail("They are %d and %d, which leaves %d of the 63 bits for the timestamp; at least %d are needed.",
						   s->worker_bits, s->sequence_bits,
						   63 - s->worker_bits - s->sequence_bits,
						   UIDGEN_MIN_TIMESTAMP_BITS)));
	if (s->worker_id >= (1 << s->worker_bits))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("uidgen.worker_id %d does not fit in %d worker bits",
						s->worker_id, s->worker_bits),
				 errhint("Set uidgen.worker_id between 0 and %d, or raise uidgen.worker_bits.",
						 (1 << s->worker_bits) - 1)));
}

/*
 * A worker id comes either from uidgen.worker_id or from the registry:
 * refuse both, which would leave it unclear which one the IDs carry.
 */
static void
check_worker_id_source(const char *raw_worker_id)
{
	if (!uidgen_registry_on || raw_worker_id == NULL)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("uidgen.worker_id and uidgen.worker_id_registry cannot both be set"),
			 errdetail("uidgen.worker_id is \"%s\"; with a registry, each server leases its worker id from it.",
					   raw_worker_id),
			 errhint("Remove uidgen.worker_id from the configuration, or set uidgen.worker_id_registry to an empty string.")));
}

/* Is "name" under the prefix uidgen., in any case (as GUC names are)? */
static bool
is_uidgen_name(const char *name)
{
	return pg_strncasecmp(name, "uidgen.", 7) == 0;
}

/*
 * The uidgen.* setting nearest to "name" by edit distance, ignoring case
 * (the distance PostgreSQL's "did you mean" hints use), or NULL if none is
 * near.
 */
static const char *
nearest_setting(const char *name, struct config_generic **vars, int n)
{
	const char *best = NULL;
	char	   *lower = pstrdup(name);
	int			best_d = strlen(name) / 2 + 1;

	for (char *c = lower; *c; c++)
		*c = pg_tolower((unsigned char) *c);
	for (int i = 0; i < n; i++)
	{
		int			d;

		if ((vars[i]->flags & GUC_CUSTOM_PLACEHOLDER) ||
			!is_uidgen_name(vars[i]->name))
			continue;
		d = varstr_levenshtein(lower, strlen(lower), vars[i]->name,
							   strlen(vars[i]->name), 1, 1, 1, false);
		if (d < best_d)
		{
			best = vars[i]->name;
			best_d = d;
		}
	}
	pfree(lower);
	return best;
}

/*
 * PostgreSQL only warns about a misspelt setting of a reserved prefix and
 * drops it: "uidgen.workerid = 5" would leave the server without the
 * worker id it was meant to have.  Refuse to start instead, naming the
 * nearest setting.  Runs after the settings are defined and before the
 * prefix is reserved, while the misspelt ones are still placeholders.
 * The prefix is matched in any case: PostgreSQL's reservation is
 * case-sensitive and would keep "UIDGEN.WORKERID = 5" silently, yet
 * "UIDGEN.WORKER_ID = 5" sets uidgen.worker_id (GUC names ignore case).
 */
static void
check_unknown_settings(void)
{
	int			n;
	struct config_generic **vars = UIDGEN_GUC_VARIABLES(&n);

	for (int i = 0; i < n; i++)
	{
		const char *near;

		if (!(vars[i]->flags & GUC_CUSTOM_PLACEHOLDER) ||
			!is_uidgen_name(vars[i]->name))
			continue;
		near = nearest_setting(vars[i]->name, vars, n);
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("unrecognized configuration parameter \"%s\"", vars[i]->name),
				 errdetail("uidgen does not start with a setting it does not know: a misspelt setting would leave the server without the value it was meant to have."),
				 near ? errhint("Perhaps you meant \"%s\".", near) :
				 errhint("Remove it from the configuration; the uidgen.* settings are listed in the README.")));
	}
}

/* Define the settings of the clock and the snowflake layout. */
static void
define_clock_settings(void)
{
	DefineCustomIntVariable("uidgen.worker_id",
							"Worker id stored in every snowflake ID from this server.",
							"Must be unique among the servers that generate IDs for the same data.",
							&uidgen_settings.worker_id,
							0, 0, (1 << UIDGEN_MAX_LAYOUT_BITS) - 1,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("uidgen.worker_bits",
							"Number of bits of a snowflake ID that hold the worker id.",
							NULL,
							&uidgen_settings.worker_bits,
							10, 0, UIDGEN_MAX_LAYOUT_BITS,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("uidgen.sequence_bits",
							"Number of bits of a snowflake ID that hold the per-millisecond sequence.",
							NULL,
							&uidgen_settings.sequence_bits,
							12, 0, UIDGEN_MAX_SEQUENCE_BITS,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomStringVariable("uidgen.epoch",
							   "Instant that snowflake ID timestamps count from.",
							   NULL,
							   &epoch_string,
							   DEFAULT_EPOCH,
							   PGC_POSTMASTER, 0, check_epoch, assign_epoch, NULL);
	DefineCustomIntVariable("uidgen.max_clock_drift",
							"How far the ID clock may run ahead of real time before generation waits.",
							NULL,
							&uidgen_max_clock_drift,
							1000, 1, 3600 * 1000,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomStringVariable("uidgen.worker_id_registry",
							   "Connection string of the database that leases worker ids; empty to use uidgen.worker_id.",
							   NULL,
							   &uidgen_worker_id_registry,
							   "",
							   PGC_POSTMASTER, GUC_SUPERUSER_ONLY, NULL, NULL, NULL);
	DefineCustomIntVariable("uidgen.worker_lease",
							"How long a worker id leased from the registry is held without renewal.",
							NULL,
							&uidgen_worker_lease_ms,
							30000, 3000, 24 * 3600 * 1000,
							PGC_POSTMASTER, GUC_UNIT_MS, NULL, NULL, NULL);
}

/* Define the settings of block sequences (allocator, cache, failover skip). */
static void
define_block_settings(void)
{
	DefineCustomIntVariable("uidgen.block_timeout",
							"How long a block sequence caller waits for the allocator.",
							"Past it, seq_reserve_block() and seq_next() fail with SQLSTATE 55P03.",
							&uidgen_block_timeout,
							10000, 1, INT_MAX,
							PGC_USERSET, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("uidgen.citus_block_lease",
							"How long a Citus worker may serve a block of a block sequence it reserved from the coordinator.",
							"The coordinator's value counts. Past it the worker throws the rest of the block away; seq_drop(), seq_advance(), seq_alter() and changes of id_sequences on the coordinator wait until no such block can still be served.",
							&uidgen_citus_block_lease,
							10000, 100, 3600 * 1000,
							PGC_SIGHUP, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("uidgen.block_databases",
							"Number of databases that can use block sequences at the same time.",
							"Each runs one allocator background worker, counted in max_worker_processes.",
							&uidgen_block_databases,
							4, 1, 1024,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("uidgen.allocator_idle_timeout",
							"How long an idle block allocator stays before it exits, and how long a block sequence nobody uses keeps its prefetched range.",
							"0 keeps allocators and ranges until shutdown.",
							&uidgen_allocator_idle_timeout,
							60, 0, 86400,
							PGC_SIGHUP, GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomIntVariable("uidgen.block_cache_entries",
							"Number of block sequences seq_next() and seq_reserve_block() can cache in shared memory.",
							"Each entry holds the ranges prefetched for one sequence of one database.",
							&uidgen_block_cache_entries,
							128, 1, 65536,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("uidgen.promotion_skip",
							"How many values every block sequence skips ahead after a timeline change.",
							"Promotion and the end of a point-in-time recovery start a new timeline. "
							"The skip covers blocks the old primary handed out whose commits did not reach this server. "
							"0 turns it off.",
							&uidgen_promotion_skip,
							1000000, 0, INT_MAX,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
}

#ifdef UIDGEN_CRASH_POINTS
char	   *uidgen_crash_point = NULL;
int			uidgen_crash_action = UIDGEN_CRASH_KILL;

static const struct config_enum_entry crash_actions[] = {
	{"kill", UIDGEN_CRASH_KILL, false},
	{"wait", UIDGEN_CRASH_WAIT, false},
	{"error", UIDGEN_CRASH_ERROR, false},
	{NULL, 0, false}
};

/* Define uidgen.crash_point and uidgen.crash_action (test builds only). */
static void
define_crash_settings(void)
{
	DefineCustomStringVariable("uidgen.crash_point",
							   "Test builds only: the crash point to act at.",
							   NULL, &uidgen_crash_point, "", PGC_SUSET, 0,
							   NULL, NULL, NULL);
	DefineCustomEnumVariable("uidgen.crash_action",
							 "Test builds only: what a process does at the crash point.",
							 NULL, &uidgen_crash_action, UIDGEN_CRASH_KILL, crash_actions,
							 PGC_SUSET, 0, NULL, NULL, NULL);
}
#endif

/* Is citus in shared_preload_libraries (where Citus must be)? */
static bool
citus_preloaded(void)
{
	char	   *raw = pstrdup(shared_preload_libraries_string);
	List	   *names;
	ListCell   *lc;
	bool		found = false;

	if (SplitDirectoriesString(raw, ',', &names))
		foreach(lc, names)
		{
			const char *name = lfirst(lc);
			const char *base = strrchr(name, '/');

			found |= strcmp(base ? base + 1 : name, "citus") == 0;
		}
	return found;
}

/*
 * Define every setting (from _PG_init, when preloaded), and refuse to start
 * with a value that shapes IDs and was not taken as configured, with a
 * layout that cannot hold the worker id, or with two sources of worker id.
 */
void
settings_define(void)
{
	char	   *raw_worker_id = configured("uidgen.worker_id");
	char	   *raw_worker_bits = configured("uidgen.worker_bits");
	char	   *raw_sequence_bits = configured("uidgen.sequence_bits");
	char	   *raw_epoch = configured("uidgen.epoch");

	define_clock_settings();
	define_block_settings();
#ifdef UIDGEN_CRASH_POINTS
	define_crash_settings();
#endif
	check_unknown_settings();
	MarkGUCPrefixReserved("uidgen");

	check_configured("uidgen.worker_id", raw_worker_id, uidgen_settings.worker_id);
	uidgen_settings.worker_id_set = raw_worker_id != NULL;
	check_configured("uidgen.worker_bits", raw_worker_bits, uidgen_settings.worker_bits);
	check_configured("uidgen.sequence_bits", raw_sequence_bits, uidgen_settings.sequence_bits);
	check_configured("uidgen.epoch", raw_epoch, uidgen_settings.epoch_ms);
	check_layout();
	uidgen_registry_on = uidgen_worker_id_registry[0] != '\0';
	check_worker_id_source(raw_worker_id);
	uidgen_citus_preloaded = citus_preloaded();
}
