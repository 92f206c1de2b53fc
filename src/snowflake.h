/*-------------------------------------------------------------------------
 *
 * snowflake.h
 *	  Snowflake ID layout: 0 | milliseconds since epoch | worker | sequence.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_SNOWFLAKE_H
#define UIDGEN_SNOWFLAKE_H

#include "uidgen.h"

extern bool snowflake_change_is_safe(const UidgenSettings *before,
									 const UidgenSettings *after,
									 uint64 floor);
extern char *snowflake_settings_detail(const UidgenSettings *before);

#endif							/* UIDGEN_SNOWFLAKE_H */
