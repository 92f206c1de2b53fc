/*-------------------------------------------------------------------------
 *
 * uidgen.c
 *	  Module entry point: the uidgen.* settings and the hooks that give
 *	  the generators their shared memory and background worker.
 *
 * Every setting that shapes a snowflake ID (worker id, epoch, layout) is
 * PGC_POSTMASTER: changing one while IDs are being generated could repeat
 * or reorder IDs.  uidgen.max_clock_drift only bounds how far ahead of real
 * time IDs may run, so it can be changed with a reload.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/datetime.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "keeper.h"
#include "shmem.h"
#include "uidgen.h"

PG_MODULE_MAGIC;

#define DEFAULT_EPOCH "2024-01-01 00:00:00+00"

UidgenSettings uidgen_settings;
int			uidgen_max_clock_drift = 1000;

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
		DecodeDateTime(field, ftype, nf, &dtype, &tm, &fsec, &tz) != 0 ||
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
	*extra = malloc(sizeof(int64));
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

/* Define the uidgen.* settings and reserve the prefix. */
static void
define_settings(void)
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
	MarkGUCPrefixReserved("uidgen");
}

/* Module load: settings always; shared memory and worker only if preloaded. */
void
_PG_init(void)
{
	define_settings();
	check_layout();

	if (!process_shared_preload_libraries_in_progress)
		return;

	shmem_install_hooks();
	keeper_register();
}
