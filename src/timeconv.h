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

#include "datatype/timestamp.h"

#define UNIX_EPOCH_IN_PG_USECS \
	((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY)

/* A timestamptz at a millisecond since the Unix epoch. */
static inline TimestampTz
unix_ms_to_timestamptz(int64 ms)
{
	return ms * 1000 - UNIX_EPOCH_IN_PG_USECS;
}

/* The millisecond since the Unix epoch holding a finite timestamptz. */
static inline int64
timestamptz_to_unix_ms(TimestampTz ts)
{
	int64		us = ts + UNIX_EPOCH_IN_PG_USECS;

	return us >= 0 ? us / 1000 : -((-us + 999) / 1000);
}

#endif							/* UIDGEN_TIMECONV_H */
