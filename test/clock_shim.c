/*
 * LD_PRELOAD shim for test/t/055_no_false_step.pl: makes a wall-clock read
 * look preempted.
 *
 * Built by the test at run time:  cc -shared -fPIC -o shim.so clock_shim.c -ldl
 *
 * UIDGEN_SHIM_DELAY  a trigger file: while it exists, clock_gettime() of
 *                    CLOCK_REALTIME_COARSE reads the clock, then sleeps
 *                    30 ms before returning what it read, as if the process
 *                    had been preempted right after the read.  Every other
 *                    clock, and every read while the file is absent, is
 *                    passed through.
 *
 * Copyright (c) 2026, The uidgen developers
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define DELAY_US 30000

typedef int (*clock_gettime_fn) (clockid_t, struct timespec *);

/* The real clock_gettime(), through the shim. */
int
clock_gettime(clockid_t id, struct timespec *ts)
{
	static clock_gettime_fn real = NULL;
	const char *trigger;
	int			rc;

	if (real == NULL)
		real = (clock_gettime_fn) dlsym(RTLD_NEXT, "clock_gettime");
	rc = real(id, ts);
	if (id == CLOCK_REALTIME_COARSE &&
		(trigger = getenv("UIDGEN_SHIM_DELAY")) != NULL &&
		access(trigger, F_OK) == 0)
		usleep(DELAY_US);
	return rc;
}
