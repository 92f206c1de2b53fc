/*-------------------------------------------------------------------------
 *
 * numformat.h
 *	  Formatted numbers of block sequences ('INV-{YYYY}-{n:6}'): parse,
 *	  validate and apply a format.  Pure functions, no catalog access.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_NUMFORMAT_H
#define UIDGEN_NUMFORMAT_H

/* Bytes of a format, at most. */
#define NUMFORMAT_MAX_BYTES 256

#include "pgtime.h"

extern void numformat_validate(const char *format, int64 max_value);
extern char *numformat_apply(const char *format, int64 n,
							 int year, int month, int day);
extern char numformat_iso7064_check(const char *s, int len);
extern pg_tz *numformat_zone(const char *name);

#endif							/* UIDGEN_NUMFORMAT_H */
