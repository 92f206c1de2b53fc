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

extern int32 period_key(const char *reset, const char *time_zone, TimestampTz at);
extern int64 period_number(int32 key, int64 max_value, int64 n);

#endif							/* UIDGEN_PERIOD_H */
