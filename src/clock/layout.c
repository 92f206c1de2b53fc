/*-------------------------------------------------------------------------
 *
 * layout.c
 *	  The snowflake ID layout: the range of instants it covers, and which
 *	  changes of the settings across a restart could repeat an ID.
 *
 * Used by snowflake.c, to build and decode IDs, and by statefile.c, to
 * judge the settings a state file records against the ones in force.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/timestamp.h"

#include "clock/layout.h"
#include "core/timeconv.h"

/*
 * A layout given as arguments (worker_id 0), checked as the settings are:
 * an epoch from 1970 on, field widths within the settings' ranges and at
 * most UIDGEN_MAX_LAYOUT_BITS together.
 */
void
layout_from_args(UidgenSettings *l, TimestampTz epoch, int32 worker_bits,
				 int32 sequence_bits)
{
	int64		epoch_ms;

	if (!timestamptz_to_unix_ms(epoch, &epoch_ms) || epoch_ms < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid snowflake epoch: \"%s\"", timestamptz_to_str(epoch)),
				 errdetail("The epoch must be a finite instant not before 1970-01-01 00:00:00+00.")));
	if (worker_bits < 0 || worker_bits > UIDGEN_MAX_LAYOUT_BITS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("worker_bits must be between 0 and %d", UIDGEN_MAX_LAYOUT_BITS),
				 errdetail("The value given was %d.", worker_bits)));
	if (sequence_bits < 0 || sequence_bits > UIDGEN_MAX_SEQUENCE_BITS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("sequence_bits must be between 0 and %d", UIDGEN_MAX_SEQUENCE_BITS),
				 errdetail("The value given was %d.", sequence_bits)));
	if (worker_bits + sequence_bits > UIDGEN_MAX_LAYOUT_BITS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("worker_bits + sequence_bits must not exceed %d", UIDGEN_MAX_LAYOUT_BITS),
				 errdetail("worker_bits is %d and sequence_bits is %d; a snowflake ID keeps at least %d timestamp bits.",
						   worker_bits, sequence_bits, UIDGEN_MIN_TIMESTAMP_BITS)));
	l->worker_id = 0;
	l->worker_bits = worker_bits;
	l->sequence_bits = sequence_bits;
	l->epoch_ms = epoch_ms;
}

/* The millisecond a non-negative ID was generated in; 22008 past timestamptz. */
TimestampTz
layout_timestamp_of(const UidgenSettings *l, int64 id)
{
	int64		ms = id >> (l->worker_bits + l->sequence_bits);

	/* narrow layouts reach past timestamptz's range (year 294276) */
	if (ms > END_TIMESTAMP / 1000 - l->epoch_ms)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp of snowflake ID " INT64_FORMAT " is out of range", id),
				 layout_errdetail_range(l)));
	return unix_ms_to_timestamptz(l->epoch_ms + ms);
}

/* The smallest ID of the millisecond holding ts; 22008 out of range. */
int64
layout_id_at(const UidgenSettings *l, TimestampTz ts)
{
	int64		id = -1;
	int64		ms;

	if (timestamptz_to_unix_ms(ts, &ms))
		id = layout_id_of_ms(l, ms - l->epoch_ms);
	if (id < 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range for snowflake IDs: \"%s\"",
						timestamptz_to_str(ts)),
				 layout_errdetail_range(l)));
	return id;
}

/* errdetail() naming the instants a layout covers. */
int
layout_errdetail_range(const UidgenSettings *l)
{
	int64		last = l->epoch_ms + Min(layout_last_ms(l), END_TIMESTAMP / 1000 - l->epoch_ms);

	/* (timestamptz_to_str() returns a static buffer: one copy per call) */
	char	   *epoch = pstrdup(timestamptz_to_str(unix_ms_to_timestamptz(l->epoch_ms)));

	return errdetail("With the epoch '%s' and %d timestamp bits, snowflake IDs cover instants up to %s.",
					 epoch, layout_timestamp_bits(l),
					 timestamptz_to_str(unix_ms_to_timestamptz(last)));
}

/*
 * Would every ID issued under "after" from tick "floor" on be above every
 * ID issued under "before" below it?  Then the change cannot repeat an ID.
 */
bool
layout_change_is_safe(const UidgenSettings *before,
					  const UidgenSettings *after, uint64 floor)
{
	int64		ms = (int64) UIDGEN_TICKS_TO_MS(floor);
	int64		before_next = layout_id_of_ms(before, ms - before->epoch_ms);
	int64		after_min = layout_id_of_ms(after, ms - after->epoch_ms);

	if (ms - before->epoch_ms <= 0)
		return true;			/* nothing was issued under "before" */
	return before_next >= 0 && after_min >= before_next;
}

/* The settings IDs were issued under, for messages. */
char *
layout_settings_detail(const UidgenSettings *before)
{
	return psprintf("IDs were issued with uidgen.worker_id = %d, uidgen.worker_bits = %d, uidgen.sequence_bits = %d and uidgen.epoch = '%s'; restore these settings and restart.",
					before->worker_id, before->worker_bits,
					before->sequence_bits,
					timestamptz_to_str(unix_ms_to_timestamptz(before->epoch_ms)));
}

