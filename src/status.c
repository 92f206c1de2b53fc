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
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "access/xlog.h"
#include "clock.h"
#include "copies.h"
#include "lease.h"
#include "shmem.h"
#include "timeconv.h"

#define STATUS_COLUMNS 21

PG_FUNCTION_INFO_V1(uidgen_status);

/* A state a person can read. */
static const char *
status_state(UidgenShared *s)
{
	if (s->problem == UIDGEN_STATE_CORRUPT)
		return "state file corrupt";
	if (s->problem == UIDGEN_STATE_SETTINGS_CHANGED)
		return "settings changed";
	if (s->problem == UIDGEN_STATE_UPGRADE_UNKNOWN)
		return "upgraded without state";
	if (s->rebase_pending && RecoveryInProgress())
		return "recovery";
	if (s->problem == UIDGEN_STATE_COPY)
		return "copy";
	if (uidgen_registry_on && lease_worker_id(s) < 0)
		return "no lease";
	if (!uidgen_registry_on && !uidgen_settings.worker_id_set)
		return "no worker id";
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
	UidgenShared *s = shmem_get();
	const UidgenSettings *l = &uidgen_settings;
	TupleDesc	tupdesc;
	Datum		values[STATUS_COLUMNS];
	bool		nulls[STATUS_COLUMNS] = {0};
	uint64		last = clock_latest(s);
	uint64		wall = clock_wall_ticks(true);
	uint64		snowflakes = 0;
	uint64		uuids = 0;
	uint64		last_id = 0;
	TimeLineID	tli;
	int32		worker = uidgen_registry_on ? lease_worker_id(s) :
		l->worker_id_set ? l->worker_id : -1;
	TimestampTz deadline = 0;
	int			i = 0;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	/* a promotion not settled yet (the keeper does it within a second) */
	copies_guard(s);
	for (int p = 0; p < s->nprocs; p++)
	{
		snowflakes += pg_atomic_read_u64(&s->procs[p].snowflakes);
		uuids += pg_atomic_read_u64(&s->procs[p].uuids);
		last_id = Max(last_id, pg_atomic_read_u64(&s->procs[p].last_snowflake));
	}

	values[i++] = CStringGetTextDatum(status_state(s));
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
	values[i++] = Int64GetDatum((int64) pg_atomic_read_u64(&s->episodes));
	values[i++] = Int64GetDatum((int64) pg_atomic_read_u64(&s->waits));
	values[i++] = TimestampTzGetDatum(unix_ms_to_timestamptz(UIDGEN_TICKS_TO_MS(pg_atomic_read_u64(&s->hwm))));

	/* what the state file vouches for, and the server this one was copied from */
	LWLockAcquire(s->lock, LW_SHARED);
	nulls[i] = s->vouched.sysid == 0;
	values[i++] = Int64GetDatum((int64) s->vouched.sysid);
	/* the timeline the keeper is about to vouch for, if it has not yet */
	tli = s->vouched.timeline;
	if (tli == 0 && s->copy_reason == UIDGEN_COPY_NONE && !RecoveryInProgress())
		tli = GetWALInsertionTimeLine();
	nulls[i] = tli == 0;
	values[i++] = Int32GetDatum((int32) tli);
	nulls[i] = s->copy_reason == UIDGEN_COPY_NONE || s->origin_worker < 0;
	values[i++] = Int32GetDatum(s->origin_worker);
	nulls[i] = s->copy_reason == UIDGEN_COPY_NONE;
	if (!nulls[i])
		values[i] = CStringGetTextDatum(identity_reason_name(s->copy_reason));
	i++;
	nulls[i] = pg_atomic_read_u64(&s->origin_mark) == 0;
	values[i++] = TimestampTzGetDatum(unix_ms_to_timestamptz(UIDGEN_TICKS_TO_MS(pg_atomic_read_u64(&s->origin_mark))));
	values[i++] = BoolGetDatum(s->blocks_fenced);
	LWLockRelease(s->lock);

	/* the worker id lease, with a registry */
	nulls[i] = !uidgen_registry_on;
	if (!nulls[i])
		values[i] = CStringGetTextDatum(s->lease_holder);
	i++;
	nulls[i] = !uidgen_registry_on || !lease_deadline(s, &deadline);
	values[i++] = TimestampTzGetDatum(deadline);
	Assert(i == STATUS_COLUMNS);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
