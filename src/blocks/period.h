/*-------------------------------------------------------------------------
 *
 * period.h
 *	  Numbering per period: which period a moment falls in, and the numbers
 *	  of a block sequence that restarts every period.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_PERIOD_H
#define UIDGEN_PERIOD_H

#include "datatype/timestamp.h"

/* A period: its key (0 for none) and [start, end). */
typedef struct Period
{
	int32		key;
	TimestampTz start;
	TimestampTz end;
} Period;

extern void period_of(const char *reset, const char *time_zone, TimestampTz at, Period *p);
extern int64 period_number(int32 key, int64 max_value, int64 n);

#endif							/* UIDGEN_PERIOD_H */
