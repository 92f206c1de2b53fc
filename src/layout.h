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

#include "uidgen.h"

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

extern int	layout_errdetail_range(const UidgenSettings *l);
extern bool layout_change_is_safe(const UidgenSettings *before,
								  const UidgenSettings *after,
								  uint64 floor);
extern char *layout_settings_detail(const UidgenSettings *before);

#endif							/* UIDGEN_LAYOUT_H */
