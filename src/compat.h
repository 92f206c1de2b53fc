/*-------------------------------------------------------------------------
 *
 * compat.h
 *	  Every difference between the PostgreSQL majors uidgen supports
 *	  (15 through 19), one definition per difference.
 *
 * Modules use these names and never test PG_VERSION_NUM themselves.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_COMPAT_H
#define UIDGEN_COMPAT_H

#include "miscadmin.h"
#include "storage/proc.h"
#include "utils/datetime.h"
#include "utils/guc.h"
#include "utils/guc_tables.h"
#include "utils/wait_event.h"

/* 17 numbers processes with MyProcNumber; PGPROC lost pgprocno. */
#if PG_VERSION_NUM >= 170000
#define UIDGEN_MY_PROCNO ((int) MyProcNumber)
#else
#define UIDGEN_MY_PROCNO (MyProc->pgprocno)
#endif

/* 16 added DecodeDateTime()'s error-detail argument. */
#if PG_VERSION_NUM >= 160000
#define UIDGEN_DECODE_DATETIME(f, t, n, dt, tm, fs, tz) \
	DecodeDateTime(f, t, n, dt, tm, fs, tz, &(DateTimeErrorExtra) {0})
#else
#define UIDGEN_DECODE_DATETIME(f, t, n, dt, tm, fs, tz) \
	DecodeDateTime(f, t, n, dt, tm, fs, tz)
#endif

/* 16 frees a setting's "extra" with guc_free(): allocate it with guc_malloc(). */
#if PG_VERSION_NUM >= 160000
#define UIDGEN_GUC_MALLOC(size) guc_malloc(LOG, size)
#else
#define UIDGEN_GUC_MALLOC(size) malloc(size)
#endif

/* 16 returns the number of settings from get_guc_variables() itself. */
#if PG_VERSION_NUM >= 160000
#define UIDGEN_GUC_VARIABLES(n) get_guc_variables(n)
#else
#define UIDGEN_GUC_VARIABLES(n) (*(n) = GetNumConfigOptions(), get_guc_variables())
#endif

/*
 * The wait event uidgen reports while waiting: named in pg_stat_activity on
 * 17+ (registered once per process and cached in *cache), "Extension"
 * before, and in the postmaster, which cannot register one.
 */
static inline uint32
uidgen_wait_event(uint32 *cache, const char *name)
{
#if PG_VERSION_NUM >= 170000
	if (*cache == 0 && IsUnderPostmaster)
		*cache = WaitEventExtensionNew(name);
	if (*cache != 0)
		return *cache;
#endif
	return PG_WAIT_EXTENSION;
}

#endif							/* UIDGEN_COMPAT_H */
