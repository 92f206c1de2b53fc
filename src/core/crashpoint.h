/*-------------------------------------------------------------------------
 *
 * crashpoint.h
 *	  Crash points: places between two steps of a durable transition where
 *	  a test build can kill the server or hold a process.
 *
 * They exist only when uidgen is built with UIDGEN_CRASH_POINTS=1 (make
 * UIDGEN_CRASH_POINTS=1, as scripts/test.sh does); in any other build
 * CRASH_POINT() is nothing and no trace of this module is compiled.  This
 * is uidgen's own equivalent of PostgreSQL's injection points, which
 * Debian's server packages are built without.
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef UIDGEN_CRASHPOINT_H
#define UIDGEN_CRASHPOINT_H

#ifdef UIDGEN_CRASH_POINTS
extern void crashpoint_init(void);
extern bool crashpoint_armed(const char *name);
extern void crashpoint_reach(const char *name);
#define CRASH_POINT(name) crashpoint_reach(name)
/* a fault to commit on purpose where the point is armed (crashpoint.c) */
#define CRASH_POINT_ARMED(name) crashpoint_armed(name)
#define CRASH_POINTS_INIT() crashpoint_init()
#else
#define CRASH_POINT(name) ((void) 0)
#define CRASH_POINT_ARMED(name) false
#define CRASH_POINTS_INIT() ((void) 0)
#endif

#endif							/* UIDGEN_CRASHPOINT_H */
