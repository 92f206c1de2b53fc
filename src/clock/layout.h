/*-------------------------------------------------------------------------
 *
 * layout.h
 *	  The snowflake ID layout: 0 | milliseconds since the epoch | worker |
 *	  sequence, with the widths and epoch of a UidgenSettings.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_LAYOUT_H
#define UIDGEN_LAYOUT_H

#include "datatype/timestamp.h"

#include "core/settings.h"

/* Bits left for the timestamp under a layout. */
static inline int
layout_timestamp_bits(const UidgenSettings *l)
{
	return 63 - l->worker_bits - l->sequence_bits;
}

/* The last millisecond since the epoch a layout can hold. */
static inline int64
layout_last_ms(const UidgenSettings *l)
{
	return layout_timestamp_bits(l) == 63 ? PG_INT64_MAX :
		(INT64CONST(1) << layout_timestamp_bits(l)) - 1;
}

/* The smallest ID of a millisecond since the epoch; -1 if out of range. */
static inline int64
layout_id_of_ms(const UidgenSettings *l, int64 ms)
{
	if (ms < 0 || ms > layout_last_ms(l))
		return -1;
	return ms << (l->worker_bits + l->sequence_bits);
}

/* The worker id field of an ID. */
static inline int32
layout_worker_of(const UidgenSettings *l, int64 id)
{
	return (int32) ((id >> l->sequence_bits) & ((INT64CONST(1) << l->worker_bits) - 1));
}

/* The sequence field of an ID. */
static inline int32
layout_sequence_of(const UidgenSettings *l, int64 id)
{
	return (int32) (id & ((INT64CONST(1) << l->sequence_bits) - 1));
}

extern void layout_from_args(UidgenSettings *l, TimestampTz epoch,
							 int32 worker_bits, int32 sequence_bits);
extern TimestampTz layout_timestamp_of(const UidgenSettings *l, int64 id);
extern int64 layout_id_at(const UidgenSettings *l, TimestampTz ts);
extern int	layout_errdetail_range(const UidgenSettings *l);
extern bool layout_change_is_safe(const UidgenSettings *before,
								  const UidgenSettings *after,
								  uint64 floor);
extern char *layout_settings_detail(const UidgenSettings *before);

#endif							/* UIDGEN_LAYOUT_H */
