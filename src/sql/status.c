/*-------------------------------------------------------------------------
 *
 * status.c
 *	  uidgen_status(): the generators' settings, clock and counters.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xlog.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "clock/clock.h"
#include "clock/lease.h"
#include "clock/statefile.h"
#include "core/counters.h"
#include "core/settings.h"
#include "core/shmem.h"
#include "core/timeconv.h"
#include "replicas/citus.h"
#include "replicas/copies.h"

#define STATUS_COLUMNS 22

PG_FUNCTION_INFO_V1(uidgen_status);

/* A state a person can read. */
static const char *
status_state(void)
{
	UidgenStateProblem problem = statefile_problem();

	if (problem == UIDGEN_STATE_CORRUPT)
		return "state file corrupt";
	if (problem == UIDGEN_STATE_SETTINGS_CHANGED)
		return "settings changed";
	if (problem == UIDGEN_STATE_UPGRADE_UNKNOWN)
		return "upgraded without state";
	if (copies_rebase_pending() && RecoveryInProgress())
		return "recovery";
	if (copies_refused())
		return "copy";
	if (uidgen_registry_on && lease_worker_id() < 0)
		return "no lease";
	if (citus_worker_source() == NULL)
		return "no worker id";
	if (citus_conflict())
		return "worker id conflict";
	return "ok";
}

/* An interval of a number of ticks, to the microsecond. */
static Datum
ticks_interval(uint64 ticks)
{
	Interval   *iv = palloc0(sizeof(Interval));

	iv->time = (int64) (ticks * 1000 / UIDGEN_TICKS_PER_MS);
	return IntervalPGetDatum(iv);
}

/* uidgen_status(): one row describing the generators. */
Datum
uidgen_status(PG_FUNCTION_ARGS)
{
	const UidgenSettings *l = &uidgen_settings;
	TupleDesc	tupdesc;
	Datum		values[STATUS_COLUMNS];
	bool		nulls[STATUS_COLUMNS] = {0};
	uint64		last;
	uint64		wall;
	uint64		snowflakes;
	uint64		uuids;
	uint64		last_id;
	TimeLineID	tli;
	int32		worker;
	TimestampTz deadline = 0;
	CopiesView	copy;
	int			i = 0;

	shmem_require();
	last = clock_latest();
	wall = clock_wall_ticks(true);
	worker = uidgen_registry_on ? lease_worker_id() :
		citus_worker_source() != NULL ? statefile_own_worker() : -1;
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	/* a promotion not settled yet (the keeper does it within a second) */
	copies_guard();
	counters_sum(&snowflakes, &uuids, &last_id);

	values[i++] = CStringGetTextDatum(status_state());
	nulls[i] = worker < 0;
	values[i++] = Int32GetDatum(worker);
	values[i++] = Int32GetDatum(63 - l->worker_bits - l->sequence_bits);
	values[i++] = Int32GetDatum(l->worker_bits);
	values[i++] = Int32GetDatum(l->sequence_bits);
	values[i++] = TimestampTzGetDatum(unix_ms_to_timestamptz(l->epoch_ms));
	nulls[i] = snowflakes == 0;
	values[i++] = Int64GetDatum((int64) last_id);
	values[i++] = ticks_interval(last > wall ? last - wall : 0);
	values[i++] = Int64GetDatum((int64) snowflakes);
	values[i++] = Int64GetDatum((int64) uuids);
	values[i++] = Int64GetDatum((int64) clock_episodes());
	values[i++] = Int64GetDatum((int64) clock_waits());
	values[i++] = TimestampTzGetDatum(unix_ms_to_timestamptz(UIDGEN_TICKS_TO_MS(statefile_mark())));

	/* what the state file vouches for, and the server this one was copied from */
	copies_describe(&copy);
	nulls[i] = copy.vouched.sysid == 0;
	values[i++] = Int64GetDatum((int64) copy.vouched.sysid);
	/* the timeline the keeper is about to vouch for, if it has not yet */
	tli = copy.vouched.timeline;
	if (tli == 0 && copy.copy_reason == UIDGEN_COPY_NONE && !RecoveryInProgress())
		tli = GetWALInsertionTimeLine();
	nulls[i] = tli == 0;
	values[i++] = Int32GetDatum((int32) tli);
	nulls[i] = copy.copy_reason == UIDGEN_COPY_NONE || copy.origin_worker < 0;
	values[i++] = Int32GetDatum(copy.origin_worker);
	nulls[i] = copy.copy_reason == UIDGEN_COPY_NONE;
	if (!nulls[i])
		values[i] = CStringGetTextDatum(identity_reason_name(copy.copy_reason));
	i++;
	nulls[i] = copy.origin_mark == 0;
	values[i++] = TimestampTzGetDatum(unix_ms_to_timestamptz(UIDGEN_TICKS_TO_MS(copy.origin_mark)));
	values[i++] = BoolGetDatum(copy.blocks_fenced);

	/* the worker id lease, with a registry */
	nulls[i] = !uidgen_registry_on;
	if (!nulls[i])
		values[i] = CStringGetTextDatum(lease_holder());
	i++;
	nulls[i] = !uidgen_registry_on || !lease_deadline(&deadline);
	values[i++] = TimestampTzGetDatum(deadline);

	/* where the worker id comes from: setting, registry, citus */
	nulls[i] = citus_worker_source() == NULL;
	if (!nulls[i])
		values[i] = CStringGetTextDatum(citus_worker_source());
	i++;
	Assert(i == STATUS_COLUMNS);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
