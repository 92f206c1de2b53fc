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
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "fmgr.h"
#include "utils/timestamp.h"

#include "shmem.h"
#include "layout.h"
#include "statefile.h"
#include "timeconv.h"

PG_FUNCTION_INFO_V1(snowflake_next);
PG_FUNCTION_INFO_V1(snowflake_timestamp);
PG_FUNCTION_INFO_V1(snowflake_worker);
PG_FUNCTION_INFO_V1(snowflake_sequence);
PG_FUNCTION_INFO_V1(snowflake_floor);

/* Refuse to generate when IDs could collide. */
static void
snowflake_check_state(UidgenShared *s)
{
	statefile_check_usable(s);
	if (unlikely(s->problem == UIDGEN_STATE_SETTINGS_CHANGED))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("uidgen settings changed in a way that could repeat issued snowflake IDs"),
				 errdetail("%s", layout_settings_detail(&s->recorded)),
				 errhint("To start a new ID space on purpose, stop the server and remove the file \"uidgen.state\" from the data directory; IDs may then repeat.")));
	if (unlikely(s->rebase_pending) && RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot generate snowflake IDs during recovery"),
				 errdetail("A standby shares its primary's uidgen.worker_id, so its IDs could collide with the primary's."),
				 errhint("Generate IDs on the primary; a standby generates them once it is promoted.")));
}

/* snowflake_next(): the next ID of this server. */
Datum
snowflake_next(PG_FUNCTION_ARGS)
{
	UidgenShared *s = shmem_get();
	const UidgenSettings *l = &uidgen_settings;
	int			slot_shift = UIDGEN_TICK_SHIFT - l->sequence_bits;
	uint64		tick;
	int64		ms;
	int64		id;
	UidgenProcCounters *mine;

	snowflake_check_state(s);
	tick = statefile_next_tick(s, UIDGEN_CLOCK_SNOWFLAKE, UINT64CONST(1) << slot_shift, false);
	ms = (int64) UIDGEN_TICKS_TO_MS(tick) - l->epoch_ms;
	id = layout_id_of_ms(l, ms);
	if (unlikely(id < 0))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("current time is outside the range of snowflake IDs"),
				 layout_errdetail_range(l)));
	id |= ((int64) l->worker_id << l->sequence_bits) |
		(int64) ((tick & (UIDGEN_TICKS_PER_MS - 1)) >> slot_shift);

	mine = shmem_my_counters();
	pg_atomic_write_u64(&mine->snowflakes, pg_atomic_read_u64(&mine->snowflakes) + 1);
	pg_atomic_write_u64(&mine->last_snowflake, (uint64) id);
	PG_RETURN_INT64(id);
}

/* The layout in force; it is only defined when uidgen is preloaded. */
static const UidgenSettings *
layout_in_force(void)
{
	(void) shmem_get();
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
	int64		id = snowflake_arg(fcinfo);
	int64		ms = id >> (l->worker_bits + l->sequence_bits);

	/* narrow layouts reach past timestamptz's range (year 294276) */
	if (ms > END_TIMESTAMP / 1000 - l->epoch_ms)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp of snowflake ID " INT64_FORMAT " is out of range", id),
				 layout_errdetail_range(l)));
	PG_RETURN_TIMESTAMPTZ(unix_ms_to_timestamptz(l->epoch_ms + ms));
}

/* snowflake_worker(id): the worker id field. */
Datum
snowflake_worker(PG_FUNCTION_ARGS)
{
	const UidgenSettings *l = layout_in_force();
	int64		id = snowflake_arg(fcinfo);

	PG_RETURN_INT32((int32) ((id >> l->sequence_bits) & ((INT64CONST(1) << l->worker_bits) - 1)));
}

/* snowflake_sequence(id): the sequence field. */
Datum
snowflake_sequence(PG_FUNCTION_ARGS)
{
	const UidgenSettings *l = layout_in_force();
	int64		id = snowflake_arg(fcinfo);

	PG_RETURN_INT32((int32) (id & ((INT64CONST(1) << l->sequence_bits) - 1)));
}

/* snowflake_floor(ts): the smallest ID of the millisecond holding ts. */
Datum
snowflake_floor(PG_FUNCTION_ARGS)
{
	const UidgenSettings *l = layout_in_force();
	TimestampTz ts = PG_GETARG_TIMESTAMPTZ(0);
	int64		id = -1;

	if (!TIMESTAMP_NOT_FINITE(ts))
		id = layout_id_of_ms(l, timestamptz_to_unix_ms(ts) - l->epoch_ms);
	if (id < 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range for snowflake IDs: \"%s\"",
						timestamptz_to_str(ts)),
				 layout_errdetail_range(l)));
	PG_RETURN_INT64(id);
}
