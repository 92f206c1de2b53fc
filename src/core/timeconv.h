/*-------------------------------------------------------------------------
 *
 * timeconv.h
 *	  Conversions between timestamptz and milliseconds since the Unix epoch.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_TIMECONV_H
#define UIDGEN_TIMECONV_H

#include "common/int.h"
#include "datatype/timestamp.h"

#define UNIX_EPOCH_IN_PG_USECS \
	((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY)

/* A timestamptz at a millisecond since the Unix epoch. */
static inline TimestampTz
unix_ms_to_timestamptz(int64 ms)
{
	return ms * 1000 - UNIX_EPOCH_IN_PG_USECS;
}

/*
 * The millisecond since the Unix epoch holding ts, into *ms; false for an
 * infinite ts and for one whose Unix microsecond overflows int64 (after
 * 294247-01-10 04:00:54.775807+00), which no caller's range reaches: the
 * range is checked before the sum, which must not wrap.
 */
static inline bool
timestamptz_to_unix_ms(TimestampTz ts, int64 *ms)
{
	int64		us;

	if (TIMESTAMP_NOT_FINITE(ts) || pg_add_s64_overflow(ts, UNIX_EPOCH_IN_PG_USECS, &us))
		return false;
	*ms = us >= 0 ? us / 1000 : -((-us + 999) / 1000);
	return true;
}

#endif							/* UIDGEN_TIMECONV_H */
