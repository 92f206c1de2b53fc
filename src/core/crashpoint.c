/*-------------------------------------------------------------------------
 *
 * crashpoint.c
 *	  Crash points for tests (built only with UIDGEN_CRASH_POINTS=1).
 *
 * uidgen.crash_point names one point (superuser; in postgresql.conf for
 * the postmaster, the startup process and the background workers, or with
 * SET for one session).  A process that reaches it does what
 * uidgen.crash_action says:
 *	- kill: SIGKILL itself, as kill -9 would: nothing more runs, no exit
 *	  callback, and the postmaster restarts the cluster after a backend or
 *	  worker dies (the default);
 *	- wait: log "uidgen crash point "NAME" reached" and wait until the file
 *	  uidgen.crash_release exists in the data directory, then go on;
 *	- error: raise an ERROR there.
 * Every process that reaches the point acts; the point stays armed.
 *
 * A few points are faults rather than places to stop: where one is armed,
 * the code does something wrong on purpose (CRASH_POINT_ARMED()), so that
 * a test can show that what reads it refuses.  "mark-record-short": a WAL
 * mark record written 8 bytes short (clock/walmark.c), which replay must
 * stop at; "mark-record-op": one written with an op code uidgen has not,
 * likewise.
 *
 * On a gcov build (scripts/test.sh UIDGEN_COVERAGE=1 adds -DUIDGEN_GCOV) a
 * process about to kill itself first writes its gcov counts, which a
 * SIGKILL would lose: what it ran before the crash point counts too; so
 * does a process about to PANIC, which abort()s (crashpoint_init()).
 *
 * Copyright (c) 2026, The uidgen developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <signal.h>
#include <unistd.h>

#include "miscadmin.h"
#include "utils/elog.h"

#include "core/crashpoint.h"
#include "core/settings.h"

#define CRASH_RELEASE_FILE "uidgen.crash_release"

#ifdef UIDGEN_GCOV
/* libgcov's (linked in by --coverage): write this process's counts now */
extern void __gcov_dump(void);

static emit_log_hook_type crashpoint_prev_emit = NULL;

/* gcov build: a process about to PANIC writes its counts first. */
static void
crashpoint_emit(ErrorData *edata)
{
	if (edata->elevel >= PANIC)
		__gcov_dump();
	if (crashpoint_prev_emit)
		crashpoint_prev_emit(edata);
}
#endif

/* Set up, from _PG_init: on a gcov build, the hook above. */
void
crashpoint_init(void)
{
#ifdef UIDGEN_GCOV
	crashpoint_prev_emit = emit_log_hook;
	emit_log_hook = crashpoint_emit;
#endif
}

/* Is crash point "name" the armed one?  Logs that it was reached if so. */
bool
crashpoint_armed(const char *name)
{
	if (uidgen_crash_point == NULL || strcmp(uidgen_crash_point, name) != 0)
		return false;
	ereport(LOG,
			(errmsg("uidgen crash point \"%s\" reached", name)));
	return true;
}

/* A process reached crash point "name": act if it is the armed one. */
void
crashpoint_reach(const char *name)
{
	if (!crashpoint_armed(name))
		return;
	switch ((UidgenCrashAction) uidgen_crash_action)
	{
		case UIDGEN_CRASH_KILL:
#ifdef UIDGEN_GCOV
			__gcov_dump();
#endif
			(void) kill(getpid(), SIGKILL);
			for (;;)
				pause();
		case UIDGEN_CRASH_WAIT:
			/* interrupts too: a promotion waits for every backend's barrier */
			while (access(CRASH_RELEASE_FILE, F_OK) != 0)
			{
				CHECK_FOR_INTERRUPTS();
				pg_usleep(10000L);
			}
			ereport(LOG,
					(errmsg("uidgen crash point \"%s\" released", name)));
			break;
		case UIDGEN_CRASH_ERROR:
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("uidgen crash point \"%s\"", name)));
	}
}
