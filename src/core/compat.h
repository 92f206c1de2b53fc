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
#include "utils/wait_event.h"

/* 17 numbers processes with MyProcNumber; PGPROC lost pgprocno. */
#if PG_VERSION_NUM >= 170000
#define UIDGEN_MY_PROCNO ((int) MyProcNumber)
#else
#define UIDGEN_MY_PROCNO (MyProc->pgprocno)
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
