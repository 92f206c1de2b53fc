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

#include "layout.h"
#include "timeconv.h"

/* errdetail() naming the instants a layout covers. */
int
layout_errdetail_range(const UidgenSettings *l)
{
	int64		last = l->epoch_ms + Min(layout_last_ms(l), END_TIMESTAMP / 1000 - l->epoch_ms);

	return errdetail("With uidgen.epoch = '%s' and %d timestamp bits, snowflake IDs cover instants up to %s.",
					 timestamptz_to_str(unix_ms_to_timestamptz(l->epoch_ms)),
					 layout_timestamp_bits(l),
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
		return after_min >= 0;	/* nothing was issued under "before" */
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

