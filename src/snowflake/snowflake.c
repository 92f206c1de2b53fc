/*-------------------------------------------------------------------------
 *
 * snowflake.c
 *	  snowflake_next() and the functions that decode snowflake IDs.
 *
 * An ID is 0 | milliseconds since uidgen.epoch | worker id | sequence, the
 * widths given by uidgen.worker_bits and uidgen.sequence_bits.  The
 * millisecond and sequence come from one tick of the snowflake logical clock
 * (clock.c), taken on a sequence-slot boundary, so a sequence overflow
 * simply borrows the next millisecond.
 *
 * With a worker id registry, the worker id is the one leased
 * (clock/lease.c), and each tick is taken under the lease and checked
 * against it afterwards.
 *
 * The decoders read the layout from the settings (STABLE) or take it as
 * arguments (IMMUTABLE, for index expressions); snowflake_at() builds IDs
 * for past instants under another worker id.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "fmgr.h"
#include "utils/timestamp.h"

#include "clock/layout.h"
#include "clock/lease.h"
#include "clock/statefile.h"
#include "core/counters.h"
#include "core/crashpoint.h"
#include "core/settings.h"
#include "core/shmem.h"
#include "replicas/citus.h"
#include "replicas/copies.h"

PG_FUNCTION_INFO_V1(snowflake_next);
PG_FUNCTION_INFO_V1(snowflake_timestamp);
PG_FUNCTION_INFO_V1(snowflake_worker);
PG_FUNCTION_INFO_V1(snowflake_sequence);
PG_FUNCTION_INFO_V1(snowflake_timestamp_layout);
PG_FUNCTION_INFO_V1(snowflake_worker_layout);
PG_FUNCTION_INFO_V1(snowflake_sequence_layout);
PG_FUNCTION_INFO_V1(snowflake_floor);
PG_FUNCTION_INFO_V1(snowflake_at);

/* Refuse to generate when IDs could collide. */
static void
snowflake_check_state(void)
{
	statefile_check_usable();
	if (unlikely(statefile_problem() == UIDGEN_STATE_SETTINGS_CHANGED))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("uidgen settings changed in a way that could repeat issued snowflake IDs"),
				 errdetail("%s", layout_settings_detail(statefile_recorded())),
				 errhint("To start a new ID space on purpose, stop the server and remove the file \"uidgen.state\" from the data directory; IDs may then repeat.")));
	/*
	 * One test of the flag, then the end of recovery settled here if it is
	 * due: a promotion between a test of recovery and a test of the flag
	 * would let a tick through on the clock from before the rebase.
	 */
	if (unlikely(copies_rebase_pending()))
		copies_end_recovery();
	if (unlikely(copies_rebase_pending()))
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot generate snowflake IDs during recovery"),
				 errdetail("A standby shares its primary's uidgen.worker_id, so its IDs could collide with the primary's."),
				 errhint("Generate IDs on the primary; a standby generates them once it is promoted.")));
	/* copies_publish() wrote problem before it cleared rebase_pending */
	pg_read_barrier();
	if (unlikely(copies_refused()))
		copies_refuse();
	/* (a Citus refusal is checked after the tick, for its worker id) */
}

/*
 * A tick under the lease on a worker id (registry mode): taken again if the
 * lease changed meanwhile, refused if there is none.
 */
static pg_noinline uint64
snowflake_leased_tick(uint64 granule, int32 *worker)
{
	for (;;)
	{
		uint64		lease = lease_begin();
		uint64		tick = statefile_next_tick(UIDGEN_CLOCK_SNOWFLAKE, granule, false);

		if (lease_confirm(lease, tick))
		{
			*worker = LEASE_WORKER(lease);
			return tick;
		}
	}
}

/* snowflake_next(): the next ID of this server. */
Datum
snowflake_next(PG_FUNCTION_ARGS)
{
	const UidgenSettings *l = &uidgen_settings;
	int			slot_shift = UIDGEN_TICK_SHIFT - l->sequence_bits;
	uint64		tick;
	int32		worker;
	int64		ms;
	int64		id;

	shmem_require();
	CRASH_POINT("snowflake-before-check");
	snowflake_check_state();
	if (likely(!uidgen_registry_on))
	{
		/* without uidgen.worker_id, the one adopted from Citus (durable first) */
		worker = likely(l->worker_id_set) ? l->worker_id : citus_worker_id();
		tick = statefile_next_tick(UIDGEN_CLOCK_SNOWFLAKE, UINT64CONST(1) << slot_shift, false);
	}
	else
		tick = snowflake_leased_tick(UINT64CONST(1) << slot_shift, &worker);

	/*
	 * A Citus refusal of the worker id the tick goes with, checked once the
	 * id is known: a backend's first ID adopts its database's group id (the
	 * server's adopted id before it may be another database's), a lease may
	 * change the id, and a refusal published before the tick holds for this
	 * call (uidgen_citus_check() reports it only once published).  The tick
	 * of a refused call is lost, as any tick of a call that fails.
	 */
	if (unlikely(worker == statefile_refused_worker()))
		citus_refuse_conflict();
	ms = (int64) UIDGEN_TICKS_TO_MS(tick) - l->epoch_ms;
	id = layout_id_of_ms(l, ms);
	if (unlikely(id < 0))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("current time is outside the range of snowflake IDs"),
				 layout_errdetail_range(l)));
	id |= ((int64) worker << l->sequence_bits) |
		(int64) ((tick & (UIDGEN_TICKS_PER_MS - 1)) >> slot_shift);

	counters_count_snowflake(id);
	PG_RETURN_INT64(id);
}

/* The layout in force; it is only defined when uidgen is preloaded. */
static const UidgenSettings *
layout_in_force(void)
{
	shmem_require();
	return &uidgen_settings;
}

/* The ID argument, refusing negative values. */
static int64
snowflake_arg(FunctionCallInfo fcinfo)
{
	int64		id = PG_GETARG_INT64(0);

	if (id < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid snowflake ID: " INT64_FORMAT, id),
				 errdetail("Snowflake IDs are never negative.")));
	return id;
}

/* snowflake_timestamp(id): the millisecond the ID was generated in. */
Datum
snowflake_timestamp(PG_FUNCTION_ARGS)
{
	const UidgenSettings *l = layout_in_force();

	PG_RETURN_TIMESTAMPTZ(layout_timestamp_of(l, snowflake_arg(fcinfo)));
}

/* snowflake_worker(id): the worker id field. */
Datum
snowflake_worker(PG_FUNCTION_ARGS)
{
	const UidgenSettings *l = layout_in_force();

	PG_RETURN_INT32(layout_worker_of(l, snowflake_arg(fcinfo)));
}

/* snowflake_sequence(id): the sequence field. */
Datum
snowflake_sequence(PG_FUNCTION_ARGS)
{
	const UidgenSettings *l = layout_in_force();

	PG_RETURN_INT32(layout_sequence_of(l, snowflake_arg(fcinfo)));
}

/* The layout given as arguments 1 to 3 (epoch, worker bits, sequence bits). */
static UidgenSettings
layout_arg(FunctionCallInfo fcinfo)
{
	UidgenSettings l;

	layout_from_args(&l, PG_GETARG_TIMESTAMPTZ(1), PG_GETARG_INT32(2),
					 PG_GETARG_INT32(3));
	return l;
}

/* snowflake_timestamp(id, epoch, worker_bits, sequence_bits), IMMUTABLE. */
Datum
snowflake_timestamp_layout(PG_FUNCTION_ARGS)
{
	UidgenSettings l = layout_arg(fcinfo);

	PG_RETURN_TIMESTAMPTZ(layout_timestamp_of(&l, snowflake_arg(fcinfo)));
}

/* snowflake_worker(id, epoch, worker_bits, sequence_bits), IMMUTABLE. */
Datum
snowflake_worker_layout(PG_FUNCTION_ARGS)
{
	UidgenSettings l = layout_arg(fcinfo);

	PG_RETURN_INT32(layout_worker_of(&l, snowflake_arg(fcinfo)));
}

/* snowflake_sequence(id, epoch, worker_bits, sequence_bits), IMMUTABLE. */
Datum
snowflake_sequence_layout(PG_FUNCTION_ARGS)
{
	UidgenSettings l = layout_arg(fcinfo);

	PG_RETURN_INT32(layout_sequence_of(&l, snowflake_arg(fcinfo)));
}

/* snowflake_floor(ts): the smallest ID of the millisecond holding ts. */
Datum
snowflake_floor(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(layout_id_at(layout_in_force(), PG_GETARG_TIMESTAMPTZ(0)));
}

/*
 * snowflake_at(ts, worker_id, sequence): the ID of the millisecond holding
 * ts with the given fields, for backfills.  The worker id must differ from
 * uidgen.worker_id, which every ID snowflake_next() issues carries, so no
 * such ID can equal it.
 */
Datum
snowflake_at(PG_FUNCTION_ARGS)
{
	const UidgenSettings *l = layout_in_force();
	TimestampTz ts = PG_GETARG_TIMESTAMPTZ(0);
	int32		worker = PG_GETARG_INT32(1);
	int32		seq = PG_GETARG_INT32(2);

	if (worker < 0 || worker >= (1 << l->worker_bits))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("worker id %d does not fit in %d worker bits", worker, l->worker_bits),
				 errdetail("uidgen.worker_bits is %d: worker ids go from 0 to %d.",
						   l->worker_bits, (1 << l->worker_bits) - 1)));
	if (uidgen_registry_on && worker == lease_worker_id())
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("worker id %d of a backfilled snowflake ID must differ from the worker id this server leases", worker),
				 errdetail("snowflake_next() issues IDs with worker id %d, leased from the registry; a backfilled ID with it could repeat one of them.",
						   worker),
				 errhint("Reserve a worker id in the registry that no server leases, and backfill with it.")));
	if (!uidgen_registry_on && citus_worker_source() != NULL &&
		worker == statefile_own_worker())
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("worker id %d of a backfilled snowflake ID must differ from this server's worker id", worker),
				 errdetail("snowflake_next() issues IDs with worker id %d (%s); a backfilled ID with the same worker id could repeat one of them.",
						   worker, citus_worker_source()),
				 errhint("Reserve a worker id that no server generates with, and backfill with it.")));
	if (seq < 0 || seq >= (1 << l->sequence_bits))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("sequence %d does not fit in %d sequence bits", seq, l->sequence_bits),
				 errdetail("uidgen.sequence_bits is %d: sequences go from 0 to %d within a millisecond and worker id.",
						   l->sequence_bits, (1 << l->sequence_bits) - 1)));
	PG_RETURN_INT64(layout_id_at(l, ts) | ((int64) worker << l->sequence_bits) | seq);
}
